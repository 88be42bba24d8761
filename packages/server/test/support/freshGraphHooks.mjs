// Module hooks that give each import of a source module a module graph of its own: a module
// imported as `file.ts?graph=N` passes `?graph=N` on to every source module it imports, so none
// of them is shared with another graph (and none is evaluated before the entry asks for it).
// Packages outside the source folder are shared: only the project's own import order is tested.
let sourceRoot = '';

export function initialize(data) {
  sourceRoot = data.sourceRoot;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const parent = context.parentURL ?? '';
  const at = parent.indexOf('?graph=');
  if (at < 0 || !resolved.url.startsWith(sourceRoot) || resolved.url.includes('?')) return resolved;
  return { ...resolved, url: resolved.url + parent.slice(at) };
}
