// checkOutboundUrl: the outbound policy judged without fetching, as `partner create|set --webhook`
// uses it (issue 14.7). Hostnames are given answers by the resolveHost hook, so a name that resolves
// to a forbidden address is shown refused without a DNS server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkOutboundUrl, type ResolvedAddress } from '../../src/verification/safe-fetch.js';

const answers = (list: ResolvedAddress[]) => async () => list;

test('a name that resolves to any forbidden address is refused, naming the name, the address and the range', async () => {
  const cases: [ResolvedAddress[], RegExp][] = [
    [[{ address: '169.254.169.254', family: 4 }], /^hooks\.example resolves to 169\.254\.169\.254, which is a link-local address$/],
    [[{ address: '10.1.2.3', family: 4 }], /resolves to 10\.1\.2\.3, which is a private network address/],
    [[{ address: '::ffff:a9fe:a9fe', family: 6 }], /which is the IPv4-mapped IPv6 form of a link-local address/],
    [[{ address: '64:ff9b::7f00:1', family: 6 }], /which is the NAT64 IPv6 form of a loopback address/],
    // One bad answer among good ones is enough: the socket could pick it.
    [
      [
        { address: '93.184.215.14', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
      /resolves to 127\.0\.0\.1, which is a loopback address/,
    ],
  ];
  for (const [resolved, why] of cases) {
    const v = await checkOutboundUrl('https://hooks.example/idsvc', { allowPrivate: false, resolveHost: answers(resolved) });
    assert.equal(v.ok, false, JSON.stringify(resolved));
    if (!v.ok) {
      assert.equal(v.reason, 'address_not_allowed');
      assert.match(v.detail, why);
    }
  }
});

test('public answers pass; FETCH_ALLOW_PRIVATE lifts the address and port rules, not the scheme', async () => {
  assert.deepEqual(
    await checkOutboundUrl('https://hooks.example/x', { allowPrivate: false, resolveHost: answers([{ address: '93.184.215.14', family: 4 }]) }),
    { ok: true },
  );
  assert.deepEqual(await checkOutboundUrl('http://10.0.0.1:8080/x', { allowPrivate: true }), { ok: true });
  const port = await checkOutboundUrl('https://93.184.215.14:8443/x', { allowPrivate: false });
  assert.equal(port.ok ? '' : port.reason, 'port_not_allowed');
  const scheme = await checkOutboundUrl('ftp://93.184.215.14/x', { allowPrivate: true });
  assert.equal(scheme.ok ? '' : scheme.reason, 'scheme_not_allowed');
  const dns = await checkOutboundUrl('https://nowhere.example/x', { allowPrivate: false, resolveHost: async () => [] });
  assert.equal(dns.ok ? '' : dns.reason, 'dns_failed');
});
