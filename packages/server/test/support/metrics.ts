/** Reading the service's Prometheus metrics in tests, as a scrape would show them. */
import type { Histogram } from 'prom-client';

/** A histogram's observation count and sum (undefined before its first observation). */
export async function histogramCountAndSum(
  histogram: Histogram<string>,
): Promise<{ count: number | undefined; sum: number | undefined }> {
  const { values } = await histogram.get();
  const named = (suffix: string) => values.find((v) => v.metricName?.endsWith(suffix))?.value;
  return { count: named('_count'), sum: named('_sum') };
}
