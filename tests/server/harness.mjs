// What the tests of `peak serve` share: starting the server on a free loopback
// port and always stopping it, loading the npm packages installed in the build
// tree, and the exit statuses CTest reads (77: skipped).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';

export const SKIP_CODE = 77;

// A tool or package the test needs is missing: a skip on a developer's machine,
// a failure in CI (CI=true), which installs everything.
export function unavailable(reason) {
  if (process.env.CI === 'true') {
    console.error(`FAIL: ${reason} (CI=true: everything the test needs must be installed)`);
    process.exit(1);
  }
  console.log(`SKIP: ${reason}`);
  process.exit(SKIP_CODE);
}

export function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

// A CommonJS package from DIR/node_modules (npm ci ran there, in the build tree;
// ES module resolution would look beside this file, in the source tree).
export function requirePackage(dir, name) {
  const require = createRequire(path.join(path.resolve(dir), 'package.json'));
  try {
    return require(name);
  } catch (e) {
    if (e.code === 'MODULE_NOT_FOUND') unavailable(`the npm package '${name}' is not installed in ${dir}`);
    throw e;
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const running = new Set();  // servers to kill however the test ends
process.on('exit', () => { for (const child of running) child.kill('SIGKILL'); });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));

// Starts `PEAK serve -m MODEL` on a free port of 127.0.0.1 and waits until
// GET /health answers 200. Another process may take the port between the probe
// and the server's bind, so a server that exits at once is started again on
// another port. Returns { url, stop }.
export async function startServer(peak, model, extraArgs = [], { timeoutMs = 60000 } = {}) {
  for (let attempt = 1; ; ++attempt) {
    const port = await freePort();
    const args = ['serve', '-m', model, '--host', '127.0.0.1', '--port', String(port), ...extraArgs];
    console.log(`starting: ${peak} ${args.join(' ')}`);
    const child = spawn(peak, args, { stdio: ['ignore', 'inherit', 'pipe'] });
    running.add(child);
    let stderr = '';
    child.stderr.on('data', (bytes) => { stderr += bytes; process.stderr.write(bytes); });
    let exited = null;
    child.once('error', (e) => { exited = `cannot start ${peak}: ${e.message}`; });
    child.once('exit', (code, signal) => { exited = `exit ${code ?? signal}`; running.delete(child); });
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + timeoutMs;
    while (!exited && Date.now() < deadline) {
      try {
        const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
        if (response.status === 200) return { url, port, stop: () => stopServer(child) };
      } catch { /* not listening yet */ }
      await sleep(100);
    }
    if (!exited) {
      await stopServer(child);
      throw new Error(`peak serve did not answer GET /health with 200 within ${timeoutMs / 1000} s`);
    }
    if (attempt < 3 && /already in use|EADDRINUSE/i.test(stderr)) continue;
    throw new Error(`peak serve stopped before it answered (${exited})`);
  }
}

// SIGTERM, then SIGKILL if the server has not exited within 5 s.
async function stopServer(child) {
  if (!running.has(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

// Runs the test body, then exits 0, or 1 with the error; a watchdog fails a
// test that hangs (the 'exit' handler above kills its servers).
export function runTest(body, { timeoutMs = 120000 } = {}) {
  setTimeout(() => {
    console.error(`FAIL: the test did not finish within ${timeoutMs / 1000} s`);
    process.exit(1);
  }, timeoutMs).unref();
  body().then(
    () => { console.log('PASS'); process.exit(0); },
    (e) => { console.error(`FAIL: ${e && e.stack ? e.stack : e}`); process.exit(1); });
}
