// `peak serve` running an embedding model (a random bge-small-en-v1.5 with
// BGE's WordPiece vocabulary), through OpenAI's own Node client:
// client.embeddings.create with encoding_format "float", "base64" (returned as
// the string: decoded here as little-endian float32) and none (the client then
// asks for base64 and decodes it itself), strings, a list of them, token-id
// lists and `dimensions`. Every vector is checked against `peak embed` for the
// same texts, usage against `peak tokenize`; bad input is a 400 naming the field
// and index, and the chat route answers that this is an embedding model.
//   node openai_embeddings.mjs PEAK EMBEDDING_MODEL NODE_DIR
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { check, requirePackage, runTest, startServer } from './harness.mjs';

const [peak, model, nodeDir] = process.argv.slice(2);
if (!nodeDir) {
  console.error('usage: node openai_embeddings.mjs PEAK EMBEDDING_MODEL NODE_DIR');
  process.exit(2);
}
const { default: OpenAI, BadRequestError } = requirePackage(nodeDir, 'openai');

const texts = ['what is the capital of france?', 'Paris is the capital of France.', 'bananas'];

// `peak embed` on the texts: one array of numbers per text (JSON, 9 significant digits: the same float32).
function peakEmbed(args) {
  const prompts = texts.flatMap((t) => ['-p', t]);
  return JSON.parse(execFileSync(peak, ['embed', '-m', model, '-t', '1', ...prompts, ...args], { encoding: 'utf8' }));
}

// The token ids `peak tokenize` gives a text, [CLS] and [SEP] included.
function peakTokenize(text) {
  return JSON.parse(execFileSync(peak, ['tokenize', '-m', model, '-p', text, '--ids'], { encoding: 'utf8' }));
}

// OpenAI's base64: the float32 values' little-endian bytes.
function fromBase64(text) {
  const bytes = Buffer.from(text, 'base64');
  check(bytes.length % 4 === 0, 'base64 holds whole float32 values');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  return Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(4 * i, true));
}

function checkVectors(actual, expected, what) {
  check(actual.length === expected.length, `${what}: ${expected.length} vectors`);
  for (let i = 0; i < expected.length; ++i) {
    check(actual[i].length === expected[i].length, `${what}: vector ${i} has ${expected[i].length} floats`);
    const worst = Math.max(...actual[i].map((x, j) => Math.abs(x - expected[i][j])));
    check(worst <= 1e-6, `${what}: vector ${i} equals peak embed's (largest difference ${worst})`);
  }
}

function checkShape(response, n, promptTokens, what) {
  check(response.object === 'list', `${what}: object "list"`);
  check(response.model === path.basename(model), `${what}: the model's id`);
  check(response.data.length === n, `${what}: ${n} embeddings`);
  response.data.forEach((d, i) => {
    check(d.object === 'embedding' && d.index === i, `${what}: data[${i}] is embedding ${i}`);
  });
  check(response.usage.prompt_tokens === promptTokens && response.usage.total_tokens === promptTokens,
        `${what}: usage counts ${promptTokens} tokens`);
}

async function badRequest(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  return null;
}

runTest(async () => {
  const expected = peakEmbed([]);
  const expected8 = peakEmbed(['--dimensions', '8']);
  const ids = texts.map(peakTokenize);
  const allTokens = ids.reduce((sum, list) => sum + list.length, 0);
  const server = await startServer(peak, model, ['-t', '1']);
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60000 });
    const models = await client.models.list();
    check(models.data.length === 1 && models.data[0].id === path.basename(model), 'the model is listed');

    const floats = await client.embeddings.create({ model: 'bge', input: texts, encoding_format: 'float' });
    checkShape(floats, 3, allTokens, 'float');
    const floatVectors = floats.data.map((d) => d.embedding);
    checkVectors(floatVectors, expected, 'float');

    const base64 = await client.embeddings.create({ model: 'bge', input: texts, encoding_format: 'base64' });
    checkShape(base64, 3, allTokens, 'base64');
    check(base64.data.every((d) => typeof d.embedding === 'string'), 'base64: each embedding is a string');
    const decoded = base64.data.map((d) => fromBase64(d.embedding));
    check(JSON.stringify(decoded) === JSON.stringify(floatVectors), 'base64 holds the float answer\'s values exactly');

    // No encoding_format: the client asks for base64 and decodes it to numbers.
    const byDefault = await client.embeddings.create({ model: 'bge', input: texts });
    checkShape(byDefault, 3, allTokens, 'default');
    const defaultVectors = byDefault.data.map((d) => Array.from(d.embedding));
    check(JSON.stringify(defaultVectors) === JSON.stringify(floatVectors),
          'the client\'s own base64 decoding gives the float answer\'s values exactly');

    const one = await client.embeddings.create({ model: 'bge', input: texts[2], encoding_format: 'float' });
    checkShape(one, 1, ids[2].length, 'one string');
    checkVectors([one.data[0].embedding], [expected[2]], 'one string');

    const tokens = await client.embeddings.create({ model: 'bge', input: ids, encoding_format: 'float' });
    checkShape(tokens, 3, allTokens, 'token-id lists');
    checkVectors(tokens.data.map((d) => d.embedding), expected, 'token-id lists');

    const cut = await client.embeddings.create({ model: 'bge', input: texts, dimensions: 8, encoding_format: 'float' });
    checkShape(cut, 3, allTokens, 'dimensions 8');
    checkVectors(cut.data.map((d) => d.embedding), expected8, 'dimensions 8');
    for (const v of cut.data.map((d) => d.embedding)) {
      const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
      check(Math.abs(norm - 1) < 1e-6, 'dimensions 8: normalised after the cut');
    }
    console.log(`vectors of ${expected[0].length} floats, usage ${JSON.stringify(floats.usage)}: as peak embed's`);

    const empty = await badRequest(client.embeddings.create({ model: 'bge', input: ['fine', ''] }));
    console.log(`empty input: ${empty && `${empty.status}: ${empty.message}`}`);
    check(empty instanceof BadRequestError && empty.error?.param === 'input[1]', 'an empty string is a 400 naming input[1]');
    const wide = await badRequest(client.embeddings.create({ model: 'bge', input: 'x', dimensions: 385 }));
    check(wide instanceof BadRequestError && wide.error?.param === 'dimensions', 'dimensions 385 is a 400');
    const outside = await badRequest(client.embeddings.create({ model: 'bge', input: [[101, 30522]] }));
    check(outside instanceof BadRequestError && outside.error?.param === 'input[0][1]',
          'a token id outside the vocabulary is a 400 naming input[0][1]');
    const chat = await badRequest(client.chat.completions.create(
      { model: 'bge', messages: [{ role: 'user', content: 'Hi' }] }));
    console.log(`chat: ${chat && `${chat.status}: ${chat.message}`}`);
    check(chat instanceof BadRequestError && /this server runs an embedding model/.test(chat.message),
          'chat on an embedding model is a 400 saying so');
  } finally {
    await server.stop();
  }
});
