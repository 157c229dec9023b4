// The chat page of `peak serve` in headless Chromium, driven over the Chrome
// DevTools Protocol: the API key typed into its field, then two turns (the
// first sent with the Send button, a line break typed with Shift+Enter; the
// second sent with Enter), each streamed to the end. Checks the conversation
// in the DOM, the model name and the speed, that a phone-width screen needs
// no sideways scrolling, that a streamed tool call shows in an answer's
// bubble, and saves screenshots (desktop and phone width). Then images: a PNG
// attached through the file input shows as a thumbnail and is removed with its
// button, another file type is refused on the page, pasted and dropped PNGs
// are attached too, and a message sent with a PNG goes as OpenAI's image_url
// part holding the file's data URL; the server (no vision projector) answers
// 400, whose message shows on the page. With PROJECTOR (a vision projector of
// MODEL's width; "-": none), a server of its own started with --mmproj answers
// a PNG sent from the page.
//   node web_page_test.mjs PEAK MODEL NODE_DIR OUT_DIR PROJECTOR CHROMIUM
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, requirePackage, runTest, startServer, unavailable } from './harness.mjs';

const [peak, model, nodeDir, outDir, projector, chromiumPath] = process.argv.slice(2);
if (!projector) {
  console.error('usage: node web_page_test.mjs PEAK MODEL NODE_DIR OUT_DIR PROJECTOR CHROMIUM');
  process.exit(2);
}
if (!chromiumPath || !fs.existsSync(chromiumPath)) unavailable('Chromium is not installed');
const WebSocket = requirePackage(nodeDir, 'ws');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// PIL wrote these (tests/data/images/png/README.md): a 19 x 11 RGB PNG and its pixels as a PPM.
const images = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../data/images/png');
const pngFile = path.join(images, 'pil_rgb.png');
const ppmFile = path.join(images, 'pil_rgb.ppm');

// Starts headless Chromium with its DevTools endpoint on a free port (it
// prints the endpoint's address on stderr) and returns its first page's
// WebSocket address.
// Chromium's helper processes (renderer, utilities) outlive a killed browser
// process for a moment and keep writing into the profile: kill the group.
function killGroup(browser) {
  try {
    process.kill(-browser.pid, 'SIGKILL');
  } catch {
    browser.kill('SIGKILL');
  }
}

async function startChromium(profileDir) {
  const browser = spawn(chromiumPath, [
    '--headless=new', '--remote-debugging-port=0', `--user-data-dir=${profileDir}`,
    '--no-sandbox',  // CI runs as root, where Chromium's sandbox refuses to start
    '--no-first-run', '--no-default-browser-check', '--disable-gpu', '--disable-extensions',
    '--disable-background-networking', '--disable-sync', '--window-size=1024,768', 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });  // its own process group, with its helpers
  process.on('exit', () => killGroup(browser));
  const endpoint = await new Promise((resolve, reject) => {
    let stderr = '';
    browser.stderr.on('data', (bytes) => {
      stderr += bytes;
      const match = /DevTools listening on (ws:\/\/[^\s]+)/.exec(stderr);
      if (match) resolve(new URL(match[1]));
    });
    browser.once('error', reject);
    browser.once('exit', (code) => reject(new Error(`chromium exited (${code}): ${stderr}`)));
  });
  for (let i = 0; i < 100; ++i) {
    const targets = await fetch(`http://${endpoint.host}/json/list`).then((r) => r.json(), () => []);
    const page = targets.find((t) => t.type === 'page');
    if (page) return { browser, pageUrl: page.webSocketDebuggerUrl };
    await sleep(100);
  }
  throw new Error('chromium opened no page');
}

// A DevTools Protocol session: send(method, params) resolves with the result;
// events are kept per name for waitEvent.
function connect(url) {
  const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 << 20 });
  let nextId = 1;
  const pending = new Map(), waiters = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data);
    if (message.id && pending.has(message.id)) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(`${message.error.message} (${message.error.code})`));
      else resolve(message.result);
    } else if (message.method) {
      for (const w of waiters.filter((w) => w.method === message.method)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(message.params);
      }
    }
  });
  const send = (method, params = {}) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    socket.send(JSON.stringify({ id, method, params }));
  });
  const waitEvent = (method) => new Promise((resolve) => waiters.push({ method, resolve }));
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ send, waitEvent, close: () => socket.close() }));
    socket.once('error', reject);
  });
}

runTest(async () => {
  const apiKey = crypto.randomBytes(16).toString('hex');
  const server = await startServer(peak, model, ['--api-key', apiKey]);
  fs.mkdirSync(outDir, { recursive: true });
  const profileDir = fs.mkdtempSync(path.join(outDir, 'chromium-profile-'));
  let browser = null;
  try {
    const chromium = await startChromium(profileDir);
    browser = chromium.browser;
    const cdp = await connect(chromium.pageUrl);
    // The value of a page expression (awaited when it is a promise).
    const evaluate = async (expression) => {
      const { result, exceptionDetails } = await cdp.send('Runtime.evaluate',
        { expression, returnByValue: true, awaitPromise: true });
      if (exceptionDetails) throw new Error(`page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
      return result.value;
    };
    const waitFor = async (expression, what, timeoutMs = 60000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await evaluate(expression);
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await sleep(100);
      }
    };
    const key = (key, code, modifiers = 0, text = undefined) => cdp.send('Input.dispatchKeyEvent',
      { type: 'keyDown', key, code, modifiers, windowsVirtualKeyCode: 13, text })
      .then(() => cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', key, code, modifiers, windowsVirtualKeyCode: 13 }));
    const SHIFT = 8;
    // The page is idle again with n answers, finished or failed.
    const answered = (n) => `document.body.dataset.state === 'idle' && document.getElementById('stop').hidden &&
      document.querySelectorAll('#messages .message.assistant:not([aria-busy])').length === ${n}`;
    const conversation = () => evaluate(`[...document.querySelectorAll('#messages .message')].map((m) => ({
      role: m.classList.contains('user') ? 'user' : m.classList.contains('assistant') ? 'assistant' : m.className,
      text: m.querySelector('.content').textContent,
      stats: m.querySelector('.stats')?.textContent ?? null,
      error: m.querySelector('.error')?.textContent ?? null }))`);

    await cdp.send('Page.enable');
    await cdp.send('Runtime.enable');
    const loaded = cdp.waitEvent('Page.loadEventFired');
    await cdp.send('Page.navigate', { url: `${server.url}/` });
    await loaded;

    // Without the key the page cannot list the model; with it, it names the model.
    const modelName = path.basename(model);
    await waitFor(`document.getElementById('model-name').textContent.includes('401')`,
                  'the page to show that /v1/models refused it without a key', 10000);
    await evaluate(`(() => { const field = document.getElementById('api-key');
      field.value = ${JSON.stringify(apiKey)}; field.dispatchEvent(new Event('change')); })()`);
    await waitFor(`document.getElementById('model-name').textContent === ${JSON.stringify(modelName)}`,
                  `the model name ${modelName}`, 10000);
    check(await evaluate(`localStorage.getItem('peak.apiKey')`) === apiKey, 'the key is kept in localStorage');

    // Turn 1: typed with a Shift+Enter line break, sent with the Send button.
    await evaluate(`document.getElementById('input').focus()`);
    await cdp.send('Input.insertText', { text: 'Once upon a time' });
    await key('Enter', 'Enter', SHIFT, '\r');
    await cdp.send('Input.insertText', { text: 'there was a cat.' });
    const typed = 'Once upon a time\nthere was a cat.';
    check(await evaluate(`document.getElementById('input').value`) === typed, 'Shift+Enter adds a line break');
    const send = await evaluate(`(() => { const r = document.getElementById('send').getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`);
    for (const type of ['mousePressed', 'mouseReleased']) {
      await cdp.send('Input.dispatchMouseEvent', { type, x: send.x, y: send.y, button: 'left', clickCount: 1 });
    }
    // Read at once with the state: a short answer may end between two evaluations.
    const streaming = await waitFor(`document.body.dataset.state === 'streaming' &&
      { stop: !document.getElementById('stop').hidden }`, 'the answer to start', 10000);
    check(streaming.stop, 'the Stop button shows while streaming');
    await waitFor(answered(1), 'the first answer to finish', 90000);
    let messages = await conversation();
    console.log(`after turn 1: ${JSON.stringify(messages, null, 1)}`);
    check(messages.length === 2, 'one user message and one answer');
    check(messages[0].role === 'user' && messages[0].text === typed, 'the user message is the typed text');
    check(messages[1].role === 'assistant' && messages[1].text.trim().length > 0, 'the answer is not empty');
    check(messages[1].error === null, 'no error');
    check(/[0-9.]+ tokens\/s/.test(messages[1].stats), 'the speed is shown under the answer');
    check(await evaluate(`document.getElementById('input').value`) === '', 'the input was cleared');

    // Turn 2: sent with Enter; the page sends the whole conversation.
    await cdp.send('Input.insertText', { text: 'The end.' });
    await key('Enter', 'Enter', 0, '\r');
    await waitFor(answered(2), 'the second answer to finish', 90000);
    messages = await conversation();
    console.log(`after turn 2: ${JSON.stringify(messages.slice(2), null, 1)}`);
    check(messages.length === 4, 'two user messages and two answers');
    check(messages[2].role === 'user' && messages[2].text === 'The end.', 'Enter sent the second message');
    check(messages[3].role === 'assistant' && messages[3].text.trim().length > 0 && messages[3].error === null,
          'the second answer is not empty');
    check(/[0-9.]+ tokens\/s/.test(messages[3].stats), 'the speed is shown under the second answer');

    const screenshot = async (name) => {
      const { data } = await cdp.send('Page.captureScreenshot', { format: 'png' });
      const file = path.resolve(outDir, name);
      fs.writeFileSync(file, Buffer.from(data, 'base64'));
      console.log(`screenshot: ${file}`);
    };
    await screenshot('web_page.png');

    // A phone's width: everything fits without sideways scrolling.
    await cdp.send('Emulation.setDeviceMetricsOverride',
      { width: 360, height: 740, deviceScaleFactor: 2, mobile: true });
    await sleep(200);
    const overflow = await evaluate(`document.documentElement.scrollWidth - window.innerWidth`);
    check(overflow <= 0, `the page fits a 360 px wide screen (${overflow} px too wide)`);
    await screenshot('web_page_phone.png');

    // A tool call streamed as OpenAI's delta.tool_calls (its opening chunk,
    // then its arguments in two pieces) shows in the assistant's bubble.
    const callText = await evaluate(`(() => {
      const message = addMessage('assistant', '');
      const calls = [];
      showToolCall(message, calls, { index: 0, id: 'call_1', type: 'function',
                                     function: { name: 'get_weather', arguments: '' } });
      showToolCall(message, calls, { index: 0, function: { arguments: '{"city": ' } });
      showToolCall(message, calls, { index: 0, function: { arguments: '"Paris"}' } });
      return message.querySelector('.tool-call').textContent;
    })()`);
    check(callText === 'Calls get_weather({"city": "Paris"})', `the call shows with its arguments (${callText})`);

    // New chat empties the conversation.
    await evaluate(`document.getElementById('new-chat').click()`);
    check(await evaluate(`document.querySelectorAll('#messages .message').length`) === 0,
          'New chat empties the conversation');

    // Images. The server has no vision projector, and says so in /v1/models.
    await cdp.send('Emulation.clearDeviceMetricsOverride');
    check(/no vision projector/.test(await evaluate(`document.getElementById('attach').title`)),
          'the attach button says the server has no vision projector');
    const { root } = await cdp.send('DOM.getDocument');
    const { nodeId: fileInput } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#file-input' });
    const choose = (file) => cdp.send('DOM.setFileInputFiles', { nodeId: fileInput, files: [file] });
    const thumbs = `document.querySelectorAll('#attachments .thumb img')`;
    const pngUrl = 'data:image/png;base64,' + fs.readFileSync(pngFile).toString('base64');
    await choose(pngFile);
    await waitFor(`${thumbs}.length === 1 && ${thumbs}[0].complete && ${thumbs}[0].naturalWidth === 19`,
                  'the chosen PNG as a thumbnail', 10000);
    check(await evaluate(`${thumbs}[0].src`) === pngUrl, 'the thumbnail is the file as a data URL');
    await evaluate(`document.querySelector('#attachments .thumb button').click()`);
    check(await evaluate(`${thumbs}.length === 0 && document.getElementById('attachments').hidden`),
          'the remove button removes the image');
    await choose(ppmFile);
    await waitFor(`!document.getElementById('attach-note').hidden`, 'the refusal of a PPM file', 10000);
    const note = await evaluate(`document.getElementById('attach-note').textContent`);
    check(/Only PNG and JPEG/.test(note) && note.includes('pil_rgb.ppm'), `the PPM is refused on the page (${note})`);
    check(await evaluate(`${thumbs}.length`) === 0, 'the PPM is not attached');
    // A PNG pasted into the message, and one dropped on the page, are attached (then removed).
    for (const [how, event] of [['pasted', `new ClipboardEvent('paste', { clipboardData: data, bubbles: true })`],
                                ['dropped', `new DragEvent('drop', { dataTransfer: data, bubbles: true })`]]) {
      await evaluate(`(async () => {
        const bytes = await (await fetch(${JSON.stringify(pngUrl)})).blob();
        const data = new DataTransfer();
        data.items.add(new File([bytes], 'dot.png', { type: 'image/png' }));
        document.getElementById('input').dispatchEvent(${event});
      })()`);
      await waitFor(`${thumbs}.length === 1 && ${thumbs}[0].src === ${JSON.stringify(pngUrl)}`,
                    `the ${how} PNG as a thumbnail`, 10000);
      await evaluate(`document.querySelector('#attachments .thumb button').click()`);
    }
    check(await evaluate(`document.getElementById('attach-note').hidden`), 'the refusal note is gone');

    // Sent with a PNG: the request holds the text and the file's data URL; the server's 400 shows.
    await cdp.send('Network.enable');
    const chatRequest = (async () => {
      for (;;) {
        const { request } = await cdp.waitEvent('Network.requestWillBeSent');
        if (!request.url.endsWith('/v1/chat/completions')) continue;
        if (request.postData !== undefined) return request.postData;
        return (await cdp.send('Network.getRequestPostData', { requestId: request.requestId })).postData;
      }
    })();
    await choose(pngFile);
    await waitFor(`${thumbs}.length === 1`, 'the PNG attached again', 10000);
    await evaluate(`document.getElementById('input').focus()`);
    await cdp.send('Input.insertText', { text: 'What is this?' });
    await key('Enter', 'Enter', 0, '\r');
    const sent = JSON.parse(await chatRequest);
    console.log(`sent: ${JSON.stringify(sent).slice(0, 300)}`);
    check(sent.messages.length === 1 && sent.messages[0].role === 'user', 'one user message was sent');
    const parts = sent.messages[0].content;
    check(Array.isArray(parts) && parts.length === 2, 'the message is sent as content parts');
    check(parts[0].type === 'text' && parts[0].text === 'What is this?', 'a text part with the typed text');
    check(parts[1].type === 'image_url' && parts[1].image_url.url === pngUrl,
          'an image_url part with the PNG as a data:image/png;base64 URL');
    await waitFor(answered(1), 'the answer to the image to fail', 30000);
    messages = await conversation();
    console.log(`with an image: ${JSON.stringify(messages, null, 1)}`);
    check(messages[0].role === 'user' && messages[0].text === 'What is this?', 'the user bubble shows the text');
    check(await evaluate(`[...document.querySelectorAll('#messages .message.user .images img')].map((i) => i.src)
                          .join() === ${JSON.stringify(pngUrl)}`), 'the user bubble shows the image');
    check(/^HTTP 400/.test(messages[1].error) && messages[1].error.includes('no vision projector') &&
          messages[1].error.includes('--mmproj FILE'), `the server's 400 shows on the page (${messages[1].error})`);
    check(await evaluate(`${thumbs}.length`) === 1 && await evaluate(`document.getElementById('input').value`) ===
          'What is this?', 'the failed message is back in the composer, image and text');
    await screenshot('web_page_image.png');

    // With a vision projector (a server of its own, without a key): a PNG
    // sent from the page is answered.
    if (projector !== '-') {
      const vision = await startServer(peak, model, ['--mmproj', projector]);
      try {
        const opened = cdp.waitEvent('Page.loadEventFired');
        await cdp.send('Page.navigate', { url: `${vision.url}/` });
        await opened;
        await waitFor(`document.getElementById('model-name').textContent === ${JSON.stringify(modelName)}`,
                      `the model name ${modelName} from the vision server`, 10000);
        check(!/no vision projector/.test(await evaluate(`document.getElementById('attach').title`)),
              'the attach button does not warn of a missing projector');
        const { root: page } = await cdp.send('DOM.getDocument');
        const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: page.nodeId, selector: '#file-input' });
        await cdp.send('DOM.setFileInputFiles', { nodeId, files: [pngFile] });
        await waitFor(`${thumbs}.length === 1`, 'the PNG attached on the vision server\'s page', 10000);
        await evaluate(`document.getElementById('input').focus()`);
        await cdp.send('Input.insertText', { text: 'Once upon a time' });
        await key('Enter', 'Enter', 0, '\r');
        await waitFor(answered(1), 'the answer to the picture', 90000);
        messages = await conversation();
        console.log(`answered with a picture: ${JSON.stringify(messages, null, 1)}`);
        check(messages.length === 2 && messages[0].text === 'Once upon a time', 'the user message is the text');
        check(await evaluate(`[...document.querySelectorAll('#messages .message.user .images img')].map((i) => i.src)
                              .join() === ${JSON.stringify(pngUrl)}`), 'the user bubble shows the picture');
        check(messages[1].role === 'assistant' && messages[1].error === null && messages[1].text.trim().length > 0,
              `the picture is answered, not refused (${messages[1].error ?? messages[1].text})`);
        check(/[0-9.]+ tokens\/s/.test(messages[1].stats), 'the speed is shown under the answer');
        check(await evaluate(`${thumbs}.length`) === 0, 'the sent picture left the composer');
        await screenshot('web_page_vision.png');
      } finally {
        await vision.stop();
      }
    }
    cdp.close();
  } finally {
    if (browser) {
      const running = browser.exitCode === null && browser.signalCode === null;
      const exited = running ? new Promise((resolve) => browser.once('exit', resolve)) : null;
      killGroup(browser);  // its helpers too, even when the browser process itself has exited
      if (exited) await exited;
    }
    // Retried on ENOTEMPTY: a helper may still be leaving files as it dies.
    fs.rmSync(profileDir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    await server.stop();
  }
}, { timeoutMs: 240000 });
