// Which IP addresses outbound fetches (rel="me" verification, webhooks) may connect to (SPEC §9, §10).
//
// The policy is an allow-list: only plain global unicast addresses pass. Anything ipaddr.js puts in a
// special range is refused, so ranges we did not think of fail closed rather than open.
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export type AddressRange =
  | 'invalid'
  | 'unspecified'
  | 'broadcast'
  | 'multicast'
  | 'linkLocal'
  | 'loopback'
  | 'carrierGradeNat'
  | 'private'
  | 'uniqueLocal'
  | 'documentation'
  | 'reserved';

export type AddressVerdict =
  | { allowed: true }
  | {
      allowed: false;
      range: AddressRange;
      /** Set when the refused address is an IPv4 address carried inside an IPv6 one. */
      embeddedIn?: 'ipv4Mapped' | 'nat64' | '6to4';
    };

const V4_DOCUMENTATION = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'].map((c) => ipaddr.IPv4.parseCIDR(c));
const V6_DOCUMENTATION = ['2001:db8::/32', '3fff::/20'].map((c) => ipaddr.IPv6.parseCIDR(c));
// Everything outside 2000::/3 is unallocated or special-purpose; refusing it closes gaps such as the
// deprecated IPv4-compatible ::a.b.c.d form, which ipaddr.js calls "unicast".
const V6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const V6_NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

const V4_RANGE_NAMES: Partial<Record<string, AddressRange>> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'linkLocal',
  loopback: 'loopback',
  carrierGradeNat: 'carrierGradeNat',
  private: 'private',
};

const V6_RANGE_NAMES: Partial<Record<string, AddressRange>> = {
  unspecified: 'unspecified',
  multicast: 'multicast',
  linkLocal: 'linkLocal',
  loopback: 'loopback',
  uniqueLocal: 'uniqueLocal',
  // fec0::/10 is deprecated but some stacks still route it like a private network.
  deprecatedSiteLocal: 'private',
};

function classifyV4(addr: ipaddr.IPv4): AddressVerdict {
  if (V4_DOCUMENTATION.some((cidr) => addr.match(cidr))) return { allowed: false, range: 'documentation' };
  const range = addr.range();
  if (range === 'unicast') return { allowed: true };
  return { allowed: false, range: V4_RANGE_NAMES[range] ?? 'reserved' };
}

function v4FromParts(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function embedded(verdict: AddressVerdict, via: 'ipv4Mapped' | 'nat64' | '6to4'): AddressVerdict {
  return verdict.allowed ? verdict : { ...verdict, embeddedIn: via };
}

function classifyV6(addr: ipaddr.IPv6): AddressVerdict {
  const p = addr.parts;
  const range = addr.range();
  // These carry an IPv4 address that is what the packets really reach, so judge that address.
  if (range === 'ipv4Mapped') return embedded(classifyV4(addr.toIPv4Address()), 'ipv4Mapped');
  if (addr.match(V6_NAT64_WELL_KNOWN)) {
    return embedded(classifyV4(v4FromParts(p[6] ?? 0, p[7] ?? 0)), 'nat64');
  }
  if (range === '6to4') return embedded(classifyV4(v4FromParts(p[1] ?? 0, p[2] ?? 0)), '6to4');
  if (V6_DOCUMENTATION.some((cidr) => addr.match(cidr))) return { allowed: false, range: 'documentation' };
  const named = V6_RANGE_NAMES[range];
  if (named) return { allowed: false, range: named };
  // Includes Teredo, the local-use NAT64 prefix 64:ff9b:1::/48 and the translated ::ffff:0:0:0/96:
  // their real destination is not knowable (or not public) from the address alone.
  if (range !== 'unicast' || !addr.match(V6_GLOBAL_UNICAST)) return { allowed: false, range: 'reserved' };
  return { allowed: true };
}

// ipaddr.js 2.x reads any dotted suffix as IPv4-mapped ("::8.8.8.8" becomes ::ffff:808:808), which
// would let the deprecated IPv4-compatible ::8.8.8.8 pass as 8.8.8.8; rewriting the suffix as two
// hex groups first keeps the parsed address equal to the one the socket will use.
function withHexSuffix(ip: string): string {
  const m = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (!m) return ip;
  const [a, b, c, d] = m.slice(2).map(Number) as [number, number, number, number];
  return `${m[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * Classifies an IP address given in its plain textual form (what `dns.lookup` returns or what the
 * WHATWG URL parser leaves in `hostname`, brackets removed). Non-standard spellings such as
 * `0x7f.1` or `2130706433` are refused as invalid: the caller must connect to exactly the
 * address that was checked, and those spellings are interpreted differently by different parsers.
 */
export function classifyAddress(ip: string): AddressVerdict {
  const kind = net.isIP(ip);
  if (kind === 0) return { allowed: false, range: 'invalid' };
  try {
    if (kind === 4) {
      if (!ipaddr.IPv4.isValidFourPartDecimal(ip)) return { allowed: false, range: 'invalid' };
      return classifyV4(ipaddr.IPv4.parse(ip));
    }
    // The zone only picks an interface; it does not change which range the address is in.
    const zone = ip.indexOf('%');
    return classifyV6(ipaddr.IPv6.parse(withHexSuffix(zone === -1 ? ip : ip.slice(0, zone))));
  } catch {
    return { allowed: false, range: 'invalid' };
  }
}

export function isAddressAllowed(ip: string): boolean {
  return classifyAddress(ip).allowed;
}

const RANGE_TEXT: Record<AddressRange, string> = {
  invalid: 'not a valid IP address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private network address',
  uniqueLocal: 'a unique local (private network) address',
  documentation: 'a documentation address',
  reserved: 'a reserved or special-purpose address',
};

const EMBEDDING_TEXT = {
  ipv4Mapped: 'the IPv4-mapped IPv6 form of',
  nat64: 'the NAT64 IPv6 form of',
  '6to4': 'the 6to4 IPv6 form of',
} as const;

/**
 * Why an address is refused, as a noun phrase to follow "X is": "a loopback address",
 * "the IPv4-mapped IPv6 form of a private network address". Null when the address is allowed.
 */
export function addressRefusalReason(ip: string): string | null {
  const verdict = classifyAddress(ip);
  if (verdict.allowed) return null;
  const text = RANGE_TEXT[verdict.range];
  return verdict.embeddedIn ? `${EMBEDDING_TEXT[verdict.embeddedIn]} ${text}` : text;
}
