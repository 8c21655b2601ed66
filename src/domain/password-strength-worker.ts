// The body of the password-strength thread (domain/passwords.ts): zxcvbn, which costs tens of
// milliseconds a check even on a bounded input, runs here and never on the event loop.
import { parentPort } from 'node:worker_threads';
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as zxcvbnCommon from '@zxcvbn-ts/language-common';
import * as zxcvbnEn from '@zxcvbn-ts/language-en';
import { PASSWORD_JUDGED_CHARS, PASSWORD_L33T_VARIANTS } from './password-rules.js';

export interface StrengthRequest {
  id: number;
  password: string;
  words: string[];
}

export type StrengthAnswer = { id: number } & ({ ok: true; score: number; warning: string | null; suggestions: string[] } | { ok: false; message: string });

// Levenshtein matching stays off: it is by far the costliest matcher and catches little that the l33t
// and dictionary matchers do not. maxLength and l33tMaxSubstitutions bound the rest: the dictionary
// matchers look at every substring of the judged part, once per l33t reading of it, so the cost
// grows with the square of the length times the readings, and a long run of l33t symbols has many.
const estimator = new ZxcvbnFactory({
  translations: zxcvbnEn.translations,
  graphs: zxcvbnCommon.adjacencyGraphs,
  dictionary: { ...zxcvbnCommon.dictionary, ...zxcvbnEn.dictionary },
  maxLength: PASSWORD_JUDGED_CHARS,
  l33tMaxSubstitutions: PASSWORD_L33T_VARIANTS,
});

const port = parentPort!;
port.on('message', (m: StrengthRequest) => {
  let answer: StrengthAnswer;
  try {
    const result = estimator.check(m.password, m.words);
    answer = { id: m.id, ok: true, score: result.score, warning: result.feedback.warning, suggestions: result.feedback.suggestions };
  } catch (err) {
    answer = { id: m.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(answer);
});
