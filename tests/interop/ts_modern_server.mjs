// A 2026-07-28 server written with the official TypeScript SDK v2 (@modelcontextprotocol/server
// 2.4.0): the peer of mcp_ref's modern client interop tests (tests/interop/test_modern_peers.py).
//   node ts_modern_server.mjs              stdio
//   node ts_modern_server.mjs --http PORT  Streamable HTTP on 127.0.0.1:PORT/mcp (prints "listening")
// Tools: echo(text); ask_name() asks for a name with an InputRequiredResult (MRTR) and greets on
// the retry; add_tool() enables the tool "added" and publishes tools/list_changed.
import http from 'node:http';
import { acceptedContent, createMcpHandler, inputRequired, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

let addedEnabled = false;
let publish = () => {};

function buildServer() {
    const server = new McpServer({ name: 'ts-modern', version: '2.4.0' }, { capabilities: { tools: { listChanged: true } } });
    server.registerTool('echo', { description: 'Echo the text back', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
        content: [{ type: 'text', text }]
    }));
    server.registerTool('ask_name', { description: 'Ask the user name (MRTR), then greet', inputSchema: z.object({}) }, async (_args, ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'name');
        if (!answer?.name) {
            return inputRequired({
                inputRequests: {
                    name: inputRequired.elicit({
                        message: 'Your name?',
                        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }
                    })
                }
            });
        }
        return { content: [{ type: 'text', text: `hello ${answer.name}` }] };
    });
    const added = server.registerTool('added', { description: 'Enabled at run time' }, async () => ({
        content: [{ type: 'text', text: 'added' }]
    }));
    if (!addedEnabled) added.disable();
    server.registerTool('add_tool', { description: 'Enable "added" and tell the subscribers', inputSchema: z.object({}) }, async () => {
        addedEnabled = true;
        added.update({ enabled: true });
        publish();
        return { content: [{ type: 'text', text: 'ok' }] };
    });
    return server;
}

const http_ = process.argv.indexOf('--http');
if (http_ === -1) {
    void serveStdio(buildServer);
} else {
    const port = Number(process.argv[http_ + 1]);
    const handler = createMcpHandler(buildServer);
    publish = () => handler.notify.toolsChanged();
    // node:http <-> the handler's fetch (Web Request / Response), streaming the answer
    const server = http.createServer(async (req, res) => {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        const body = chunks.length ? Buffer.concat(chunks) : undefined;
        const abort = new AbortController();
        res.on('close', () => abort.abort());
        const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
            method: req.method,
            headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map(x => [k, x]) : [[k, v]])),
            body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
            signal: abort.signal
        });
        let response;
        try {
            response = await handler.fetch(request);
        } catch (e) {
            res.writeHead(500).end(String(e));
            return;
        }
        res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
        if (!response.body) return res.end();
        try {
            for await (const chunk of response.body) res.write(chunk);
        } catch {
            // the client went away
        }
        res.end();
    });
    server.listen(port, '127.0.0.1', () => console.error(`ts-modern listening on http://127.0.0.1:${port}/mcp`));
}
