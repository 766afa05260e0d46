// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk, pinned
// in package-lock.json) drives the built `webcodex mcp` over stdio: its
// listTools() validates the whole tool list (one boolean schema anywhere
// makes it throw, and hosts built on it drop the server), then each tool is
// called once, as calls.json plans, on a page served on 127.0.0.1 to a real
// headless Chromium. Run by `make test` after building bin/webcodex.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const binary = process.env.WEBCODEX_BIN || path.join(here, '..', '..', 'bin', 'webcodex');
const planText = fs.readFileSync(path.join(here, 'calls.json'), 'utf8');

function serve(page) {
  const server = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (req.url === '/') return res.end(page);
    if (req.url === '/2') return res.end('<title>second</title><p>second page</p>');
    res.statusCode = 404;
    res.end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('the TypeScript SDK client lists and calls every webcodex tool', { timeout: 180_000 }, async (t) => {
  assert.ok(fs.existsSync(binary), `build webcodex first (make build): ${binary} is missing`);
  const { page } = JSON.parse(planText);
  const server = await serve(page);
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.address().port}`;
  const plan = JSON.parse(planText.replaceAll('{{URL2}}', `${base}/2`).replaceAll('{{URL}}', `${base}/`));

  // A short state root: it holds unix sockets (108-byte paths).
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcn'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const uploads = path.join(tmp, 'uploads');
  fs.mkdirSync(uploads);
  fs.writeFileSync(path.join(uploads, plan.uploadFile), 'conformance upload\n');

  const transport = new StdioClientTransport({
    command: binary,
    args: ['mcp', '--caps', 'all', '--upload-dir', uploads],
    env: { ...process.env, WEBCODEX_STATE_DIR: path.join(tmp, 'state') },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'webcodex-ts-sdk-conformance', version: '1' });
  await client.connect(transport);
  t.after(() => client.close());
  try {
    // listTools() validates the result against the SDK's schema: it throws
    // on a boolean property schema, which fails this test.
    const { tools } = await client.listTools();
    assert.ok(tools.length > 0, 'no tools listed');
    const names = new Set(tools.map((tool) => tool.name));
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', `${tool.name}: input schema type`);
      for (const [k, p] of Object.entries(tool.inputSchema.properties ?? {})) {
        assert.equal(typeof p, 'object', `${tool.name}.${k}: schema is not an object`);
      }
    }
    const called = new Set();
    for (const c of plan.calls) {
      assert.ok(names.has(c.tool), `the plan calls ${c.tool}, which listTools does not list`);
      called.add(c.tool);
      const res = await client.callTool({ name: c.tool, arguments: c.args });
      checkResult(c.tool, c.expect, res);
    }
    for (const name of names) {
      if (called.has(name)) continue;
      // Not in the plan: called once with no arguments, and it must answer
      // a tool result (a refusal is one), never a protocol error.
      const res = await client.callTool({ name, arguments: {} });
      checkResult(name, 'any', res);
    }
  } catch (err) {
    throw new Error(`${err?.message || String(err)}\nserver stderr:\n${stderr.slice(-4000)}`, { cause: err });
  }
});

function checkResult(tool, expect, res) {
  const text = (res.content ?? []).find((c) => c.type === 'text')?.text ?? '';
  assert.equal(typeof res.structuredContent, 'object', `${tool}: no structured content`);
  assert.ok(res.structuredContent !== null, `${tool}: null structured content`);
  if (expect === 'ok') assert.ok(!res.isError, `${tool} failed: ${text}`);
  if (expect === 'refusal') assert.ok(res.isError && res.structuredContent.refusal, `${tool}: want a refusal, got ${text}`);
  if (res.isError) assert.ok(res.structuredContent.refusal?.code, `${tool}: an error that is no typed refusal: ${text}`);
  if (tool === 'browser_take_screenshot' && !res.isError) {
    assert.equal(res.content[0].type, 'image', `${tool}: the first content is not an image`);
  }
}
