import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressRefusalReason, classifyAddress, isAddressAllowed } from '../../src/verification/address-policy.js';

const refused: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['127.255.0.9', 'loopback'],
  ['::1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['fe80::1', 'linkLocal'],
  ['fe80::1%eth0', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.254', 'carrierGradeNat'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['0.0.0.0', 'unspecified'],
  ['::', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['192.0.2.10', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.99', 'documentation'],
  ['2001:db8::1', 'documentation'],
  ['fc00::1', 'uniqueLocal'],
  ['fd12:3456::1', 'uniqueLocal'],
  ['fec0::1', 'private'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:169.254.169.254', 'linkLocal'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::a00:1', 'private'],
  ['2002:7f00:1::1', 'loopback'],
  ['2002:c0a8:101::1', 'private'],
  // IPv4-compatible (deprecated) and other odd IPv6 forms fail closed.
  ['::127.0.0.1', 'reserved'],
  ['::8.8.8.8', 'reserved'],
  ['64:ff9b:1::1', 'reserved'],
  ['2001::1', 'reserved'],
  ['100::1', 'reserved'],
];

test('refuses every special-purpose range, with the range named', () => {
  for (const [ip, range] of refused) {
    const verdict = classifyAddress(ip);
    assert.equal(verdict.allowed, false, ip);
    assert.equal(!verdict.allowed && verdict.range, range, ip);
    assert.equal(isAddressAllowed(ip), false, ip);
  }
});

test('allows public unicast addresses, including mapped and translated forms of them', () => {
  for (const ip of [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450::1',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
  ]) {
    assert.equal(isAddressAllowed(ip), true, ip);
    assert.equal(addressRefusalReason(ip), null, ip);
  }
});

test('refuses anything that is not a canonical IP literal', () => {
  for (const s of ['', 'localhost', '2130706433', '0x7f.1', '0177.0.0.1', '127.1', '[::1]', '1.2.3.4.5', 'example.com']) {
    assert.deepEqual(classifyAddress(s), { allowed: false, range: 'invalid' }, s);
  }
});

test('explains refusals in words', () => {
  assert.equal(addressRefusalReason('127.0.0.1'), 'a loopback address');
  assert.equal(addressRefusalReason('10.0.0.1'), 'a private network address');
  assert.equal(addressRefusalReason('::ffff:192.168.0.1'), 'the IPv4-mapped IPv6 form of a private network address');
  assert.equal(addressRefusalReason('64:ff9b::7f00:1'), 'the NAT64 IPv6 form of a loopback address');
});
