// The TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0) against an mcp_ref server.
//   node ts_modern_client.mjs http URL
//   node ts_modern_client.mjs stdio COMMAND ARGS...
// MCP_MODE: the client's version negotiation ("auto": probe server/discover; "legacy":
// initialize). Prints one JSON object saying what it saw; exits non-zero on any failure.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [kind, ...rest] = process.argv.slice(2);
const mode = process.env.MCP_MODE || 'auto';
const client = new Client(
  { name: 'ts-interop', version: '2.4.0' },
  { capabilities: { elicitation: {} }, versionNegotiation: { mode } }
);
client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
let changed;
const toolsChanged = new Promise(resolve => { changed = resolve; });
client.setNotificationHandler('notifications/tools/list_changed', async () => changed(true));

const transport = kind === 'http'
  ? new StreamableHTTPClientTransport(new URL(rest[0]))
  : new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env });
const out = {};
await client.connect(transport);
out.era = client.getProtocolEra();
out.version = client.getNegotiatedProtocolVersion();
out.tools = (await client.listTools()).tools.map(t => t.name);
out.echo = (await client.callTool({ name: 'echo', arguments: { text: 'hello' } })).content[0].text;
const progress = [];
const counted = await client.callTool({ name: 'count', arguments: {} }, { onprogress: p => progress.push(p.progress) });
out.count = counted.content[0].text;
out.progress = progress;
out.asked = (await client.callTool({ name: 'ask_name', arguments: {} })).content[0].text;
if (out.era === 'modern') {
  const subscription = await client.listen({ toolsListChanged: true });
  out.honored = subscription.honoredFilter;
  await client.callTool({ name: 'toggle', arguments: {} });
  out.heardChange = await Promise.race([toolsChanged, new Promise(r => setTimeout(() => r(false), 5000))]);
  await subscription.close();
  await client.callTool({ name: 'toggle', arguments: {} });
}
console.log(JSON.stringify(out));
await client.close();
