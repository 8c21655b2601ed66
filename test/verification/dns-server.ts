// A real DNS server on loopback for the `dns` and `atproto` tests: UDP, RFC 1035 messages encoded
// and decoded by dns-packet. TXT records by name; any other name is NXDOMAIN, a name in `failing`
// answers SERVFAIL, one in `silent` never answers.
import dgram from 'node:dgram';
import { once } from 'node:events';
import dnsPacket from 'dns-packet';

export interface LocalDns {
  /** host:port, as DNS_SERVERS takes it. */
  server: string;
  txt: Map<string, string[]>;
  failing: Set<string>;
  silent: Set<string>;
  queries: string[];
  close(): Promise<void>;
}

export async function startDns(): Promise<LocalDns> {
  const txt = new Map<string, string[]>();
  const failing = new Set<string>();
  const silent = new Set<string>();
  const queries: string[] = [];
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, from) => {
    let request: dnsPacket.Packet;
    try {
      request = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = request.questions?.[0];
    const name = (question?.name ?? '').toLowerCase();
    queries.push(name);
    if (silent.has(name)) return;
    const records = txt.get(name);
    const rcode = failing.has(name) ? 'SERVFAIL' : records === undefined ? 'NXDOMAIN' : 'NOERROR';
    const answers: dnsPacket.Answer[] =
      rcode === 'NOERROR' && question?.type === 'TXT' ? (records ?? []).map((data) => ({ name: question.name, type: 'TXT', class: 'IN', ttl: 60, data })) : [];
    const response = dnsPacket.encode({
      id: request.id ?? 0,
      type: 'response',
      // QR, RD copied from the query, RA; the low four bits carry the response code.
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 }[rcode],
      questions: request.questions ?? [],
      answers,
    });
    socket.send(response, from.port, from.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  const { port } = socket.address();
  return {
    server: `127.0.0.1:${port}`,
    txt,
    failing,
    silent,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
