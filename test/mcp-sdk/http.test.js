// The official MCP TypeScript SDK's StreamableHTTPClientTransport drives
// `webcodex mcp --http` (the built binary): a client without the bearer
// token is turned away (401), two clients with it get sessions of their
// own (Mcp-Session-Id), each with its own browser, on a page served on
// 127.0.0.1 to a real headless Chromium. Run by `make test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const binary = process.env.WEBCODEX_BIN || path.join(here, '..', '..', 'bin', 'webcodex');

function startServer(token, state) {
  const child = spawn(binary, ['mcp', '--http', '127.0.0.1:0'], {
    env: { ...process.env, WEBCODEX_STATE_DIR: state, WEBCODEX_MCP_TOKEN: token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = stderr.match(/serving MCP \(Streamable HTTP\) at (\S+)/);
      if (m) resolve(new URL(m[1]));
    });
    exited.then(({ code }) => reject(new Error(`webcodex mcp --http exited ${code}:\n${stderr}`)));
  });
  return { child, url, exited, stderr: () => stderr };
}

async function connect(url, token) {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
  });
  const client = new Client({ name: 'webcodex-ts-sdk-http', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

test('the TypeScript SDK client over Streamable HTTP: token, sessions, own browsers', { timeout: 180_000 }, async (t) => {
  assert.ok(fs.existsSync(binary), `build webcodex first (make build): ${binary} is missing`);
  const site = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(req.url === '/b' ? '<title>b</title><p>second</p>' : '<title>a</title><button>Go</button>');
  });
  await new Promise((resolve) => site.listen(0, '127.0.0.1', resolve));
  t.after(() => site.close());
  const base = `http://127.0.0.1:${site.address().port}`;

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wch'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const token = crypto.randomBytes(32).toString('base64url');
  const server = startServer(token, path.join(tmp, 'state'));
  t.after(() => server.child.kill('SIGKILL'));
  const url = await server.url;
  try {
    await assert.rejects(connect(url, ''), 'a client without the token connected');
    await assert.rejects(connect(url, token.slice(1) + 'x'), 'a client with a wrong token connected');

    const a = await connect(url, token);
    const b = await connect(url, token);
    assert.ok(a.transport.sessionId && b.transport.sessionId, 'no Mcp-Session-Id');
    assert.notEqual(a.transport.sessionId, b.transport.sessionId);

    const { tools } = await a.client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'browser_navigate'), 'browser_navigate is not listed');
    const navA = await a.client.callTool({ name: 'browser_navigate', arguments: { url: `${base}/` } });
    assert.ok(!navA.isError, JSON.stringify(navA.content));
    const navB = await b.client.callTool({ name: 'browser_navigate', arguments: { url: `${base}/b` } });
    assert.ok(!navB.isError, JSON.stringify(navB.content));
    const pageA = navA.structuredContent.page;
    assert.notEqual(pageA, navB.structuredContent.page);

    const snap = await a.client.callTool({ name: 'browser_snapshot', arguments: {} });
    assert.match(snap.content[0].text, /button "Go"/);
    const other = await b.client.callTool({ name: 'browser_snapshot', arguments: { page: pageA } });
    assert.equal(other.structuredContent?.refusal?.code, 'not_found', 'b reached a\'s page');

    await a.transport.terminateSession();
    await a.client.close();
    const still = await b.client.callTool({ name: 'browser_evaluate', arguments: { expression: 'document.title' } });
    assert.ok(!still.isError && /b/.test(still.content[0].text), JSON.stringify(still.content));
    await b.client.close();
    server.child.kill('SIGTERM');
    const { code } = await server.exited;
    assert.equal(code, 0, 'webcodex mcp --http did not exit cleanly on SIGTERM');
    assert.ok(!server.stderr().includes(token), 'the token is on stderr');
  } catch (err) {
    throw new Error(`${err?.message || String(err)}\nserver stderr:\n${server.stderr().slice(-4000)}`, { cause: err });
  }
});
