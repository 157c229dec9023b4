// Installs the npm packages of the server tests (package.json, pinned with
// their dependencies by package-lock.json) into a build tree's directory, once
// per change of the lock file: the source tree stays free of node_modules.
//   node npm_install.mjs SOURCE_DIR NODE_DIR
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { unavailable } from './harness.mjs';

const [sourceDir, nodeDir] = process.argv.slice(2);
if (!nodeDir) {
  console.error('usage: node npm_install.mjs SOURCE_DIR NODE_DIR');
  process.exit(2);
}
const lock = fs.readFileSync(path.join(sourceDir, 'package-lock.json'));
const installed = path.join(nodeDir, 'installed-package-lock.json');  // written once npm ci succeeded
if (fs.existsSync(installed) && fs.readFileSync(installed).equals(lock)) {
  console.log(`npm packages up to date in ${nodeDir}`);
  process.exit(0);
}
fs.mkdirSync(nodeDir, { recursive: true });
fs.rmSync(installed, { force: true });
for (const file of ['package.json', 'package-lock.json']) {
  fs.copyFileSync(path.join(sourceDir, file), path.join(nodeDir, file));
}
const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: nodeDir, stdio: 'inherit' });
if (npm.error) unavailable(`cannot run npm: ${npm.error.message}`);
if (npm.status !== 0) unavailable(`npm ci failed in ${nodeDir} (exit ${npm.status}; is the npm registry reachable?)`);
fs.writeFileSync(installed, lock);
console.log(`npm packages installed in ${nodeDir}`);
