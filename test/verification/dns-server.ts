// A real DNS server on loopback for the `dns` and `atproto` tests (dns2, over UDP): TXT records by
// name; any other name is NXDOMAIN, a name in `failing` answers SERVFAIL, one in `silent` never answers.
import dns2 from 'dns2';

const { Packet } = dns2;

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
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const name = (request.questions[0]?.name ?? '').toLowerCase();
      queries.push(name);
      if (silent.has(name)) return;
      if (failing.has(name)) {
        response.header.rcode = Packet.RCODE.SERVFAIL;
      } else {
        const records = txt.get(name);
        if (records === undefined) response.header.rcode = Packet.RCODE.NXDOMAIN;
        else for (const data of records) response.answers.push({ name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data } as (typeof response.answers)[number]);
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = addresses.udp?.port;
  if (!port) throw new Error('the DNS server did not listen');
  return { server: `127.0.0.1:${port}`, txt, failing, silent, queries, close: () => server.close() };
}
