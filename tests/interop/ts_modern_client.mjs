// The official TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0) against an mcp_ref
// server in 2026-07-28 (tests/interop/test_modern_peers.py).
//   node ts_modern_client.mjs stdio PYTHON SCRIPT     (launches our server)
//   node ts_modern_client.mjs http URL
// Prints one line per step; exits non-zero on the first failure.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [kind, a, b] = process.argv.slice(2);
const fail = message => {
    console.error(`FAIL ${message}`);
    process.exit(1);
};
const text = result => (result.content?.[0]?.type === 'text' ? result.content[0].text : '');

const client = new Client(
    { name: 'ts-modern-client', version: '2.4.0' },
    { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } }
);
client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'linus' } }));
await client.connect(
    // (the whole environment: the SDK passes only a few variables by default, and our server needs PYTHONPATH when set)
    kind === 'stdio' ? new StdioClientTransport({ command: a, args: [b], env: process.env }) : new StreamableHTTPClientTransport(new URL(a))
);
const version = client.getNegotiatedProtocolVersion?.() ?? client.protocolVersion ?? '';
console.log(`version ${version}`);
const tools = await client.listTools();
console.log(`tools ${tools.tools.map(t => t.name).sort().join(',')}`);
const echoed = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
if (text(echoed) !== 'hi') fail(`echo gave ${JSON.stringify(echoed)}`);
console.log('echo ok');
const greeted = await client.callTool({ name: 'ask_name', arguments: {} });
if (text(greeted) !== 'hello linus') fail(`ask_name gave ${JSON.stringify(greeted)}`);
console.log('mrtr ok');
let changed = 0;
client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
const sub = await client.listen({ toolsListChanged: true });
if (!sub.honoredFilter.toolsListChanged) fail('toolsListChanged not honoured');
await client.callTool({ name: 'add_tool', arguments: {} });
const deadline = Date.now() + 10000;
while (changed === 0 && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
if (changed === 0) fail('no tools/list_changed through subscriptions/listen');
console.log('list_changed ok');
await sub.close();
await client.close();
console.log('done');
