// `peak serve --mmproj` through OpenAI's own Node client (the npm package
// `openai`): a picture sent as a data URL in a user message's content parts
// is answered (greedy: the same answer again, the picture then taken from the
// server's image cache), /v1/models says vision, and a picture given as a
// remote https URL is refused with a 400 whose message the client surfaces.
//   node openai_vision.mjs PEAK MODEL PROJECTOR NODE_DIR
// PROJECTOR: a vision projector of MODEL's width (tests/runtime writes a tiny
// Gemma 3 one for stories260K); NODE_DIR holds node_modules (npm ci of
// package.json, in the build tree).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, requirePackage, runTest, startServer } from './harness.mjs';

const [peak, model, projector, nodeDir] = process.argv.slice(2);
if (!nodeDir) {
  console.error('usage: node openai_vision.mjs PEAK MODEL PROJECTOR NODE_DIR');
  process.exit(2);
}
const { default: OpenAI, BadRequestError } = requirePackage(nodeDir, 'openai');
// PIL wrote it (tests/data/images/png/README.md): a 256 x 192 photo.
const photo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../data/images/png/photo_256x192.png');

runTest(async () => {
  const server = await startServer(peak, model, ['--mmproj', projector]);
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60000 });
    const models = await client.models.list();
    console.log(`models: ${JSON.stringify(models.data)}`);
    check(models.data[0].vision === true, '/v1/models says the server takes pictures');

    const url = `data:image/png;base64,${fs.readFileSync(photo).toString('base64')}`;
    const request = {
      model: models.data[0].id,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Once upon a time' },
                                           { type: 'image_url', image_url: { url, detail: 'auto' } }] }],
      max_tokens: 16, temperature: 0,
    };
    const first = await client.chat.completions.create(request);
    console.log(`with a picture: ${JSON.stringify(first.choices[0])} usage ${JSON.stringify(first.usage)} ` +
                `peak ${JSON.stringify(first.peak)}`);
    check(typeof first.choices[0].message.content === 'string' && first.choices[0].message.content.length > 0,
          'the answer to a picture is a non-empty string');
    check(first.peak.images_encoded === 1 && first.peak.images_cached === 0, 'the picture was encoded');
    const again = await client.chat.completions.create(request);
    check(again.choices[0].message.content === first.choices[0].message.content,
          'the same request answers the same greedy text');
    check(again.peak.images_encoded === 0 && again.peak.images_cached === 1, 'the picture came from the cache');

    let refusal = null;
    try {
      await client.chat.completions.create({
        ...request,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' },
                                             { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
      });
    } catch (e) {
      refusal = e;
    }
    console.log(`remote URL: ${refusal && `${refusal.constructor.name} ${refusal.status}: ${refusal.message}`}`);
    check(refusal instanceof BadRequestError, 'a remote URL raises BadRequestError (400)');
    check(refusal.error?.param === 'messages[0].content[1].image_url.url', 'the 400 names the URL');
    check(/is not a data URL .its scheme is https.; this server never fetches URLs/.test(refusal.message),
          `the client surfaces the server's message (${refusal.message})`);
  } finally {
    await server.stop();
  }
});
