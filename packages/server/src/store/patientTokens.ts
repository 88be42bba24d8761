/**
 * The audit's per-patient index on SQLite (migration 010) is an FTS5 table with the `ascii`
 * tokenizer: a token is a run of ASCII letters and digits, folded to lower case. A patient ID may
 * hold anything, so each is written as one token of its own alphabet: the characters a-y and 0-9
 * stand for themselves, every other byte of its UTF-8 (upper case, punctuation, `z` itself) is `z`
 * and two hex digits. The mapping is one-to-one, so a patient's token finds exactly that
 * patient's sets, and IDs of the usual shape (`pat_01h…`) stay about as long as they are.
 */
const PLAIN = /^[a-y0-9]$/;

export function patientToken(patientId: string): string {
  let token = '';
  for (const char of patientId) {
    if (PLAIN.test(char)) token += char;
    else for (const byte of Buffer.from(char, 'utf8')) token += `z${byte.toString(16).padStart(2, '0')}`;
  }
  // An empty ID would be no token at all.
  return token === '' ? 'z' : token;
}

/** The members of a set as the text the FTS5 table indexes: one token each. */
export function patientTokensOf(members: readonly string[]): string {
  return members.map(patientToken).join(' ');
}

/** An FTS5 query for one patient's token (quoted: a token is never read as an operator). */
export function patientTokenQuery(patientId: string): string {
  return `"${patientToken(patientId)}"`;
}
