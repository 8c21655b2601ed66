import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadCatalogueFile } from '../../src/catalogue/catalogue-file.js';
import { describePattern, examplePassing, patternAdvice } from '../../src/catalogue/pattern-text.js';
import { matchesPattern } from '../../src/catalogue/profile-url.js';

test('simple patterns are put in words, with their lengths', () => {
  assert.equal(describePattern('^[a-zA-Z0-9_]{1,15}$'), 'only letters (a–z), digits and underscores (_), at most 15 characters');
  assert.equal(describePattern('^[a-z0-9]{4,40}$'), 'only lowercase letters (a–z) and digits, 4 to 40 characters');
  assert.equal(describePattern('^[a-zA-Z0-9_-]{3,}$'), 'only letters (a–z), digits, underscores (_) and hyphens (-), at least 3 characters');
  assert.equal(describePattern('^\\w{3,20}$'), 'only letters (a–z), digits and underscores (_), 3 to 20 characters');
  assert.equal(describePattern('^([a-zA-Z0-9_]){1,15}$'), 'only letters (a–z), digits and underscores (_), at most 15 characters');
  assert.equal(describePattern('^[a-zA-Z][a-zA-Z0-9_-]*$'), 'only letters (a–z), digits, underscores (_) and hyphens (-), starting with one of letters (a–z)');
  assert.equal(describePattern('^[A-Za-z0-9]{4,12}$'), 'only letters (a–z) and digits, 4 to 12 characters');
});

test('patterns it cannot fully read give no sentence, never a wrong one', () => {
  for (const p of [
    '^[^.]*?$',
    '[a-z0-9]{4,16}',
    '^(?![.-])[a-zA-Z0-9_.-]{3,20}$',
    '^[a-zA-Z0-9](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9])){0,38}$',
    '\\w+_\\w+',
    '^.{1,25}$',
    '^[a-f]+$',
  ]) {
    assert.equal(describePattern(p), null, p);
  }
});

test('every sentence the shipped catalogue gives agrees with its pattern on names built from it', () => {
  const catalogue = loadCatalogueFile();
  for (const svc of catalogue) {
    if (svc.regexCheck === null) continue;
    const words = describePattern(svc.regexCheck);
    if (words === null) continue;
    // A name of the stated characters passes unless the length says otherwise; one with "!" never does.
    assert.equal(matchesPattern(svc.regexCheck, 'bad name!!'), false, `${svc.svcId}: ${svc.regexCheck}`);
    assert.doesNotMatch(words, /undefined|null/);
  }
});

test('otherwise an example the pattern accepts, checked against the pattern', () => {
  assert.equal(examplePassing('^[^.]*?$'), 'alice');
  assert.equal(examplePassing('\\w+_\\w+'), 'alice_smith');
  assert.equal(examplePassing('^(?![.-])[a-zA-Z0-9_.-]{3,20}$'), 'alice');
  assert.equal(examplePassing('^x{3}$'), null);
  assert.equal(patternAdvice('\\w+_\\w+', 'Example'), 'Names on Example look like “alice_smith”.');
  assert.equal(patternAdvice('^x{3}$', 'Example'), 'That is not the form names on Example take.');
  assert.equal(patternAdvice('^[a-z]{2,8}$', 'Example'), 'Names on Example use only lowercase letters (a–z), 2 to 8 characters.');
});
