// `peak serve` through OpenAI's own Node client (the npm package `openai`):
// a chat completion, the same one streamed (its deltas must make the same
// greedy text), an answer held to a JSON Schema (response_format json_schema),
// the model list, and a wrong API key refused with 401.
//   node openai_client.mjs PEAK MODEL NODE_DIR
// NODE_DIR holds node_modules (npm ci of package.json, in the build tree).
import crypto from 'node:crypto';
import path from 'node:path';
import { check, requirePackage, runTest, startServer } from './harness.mjs';

const [peak, model, nodeDir] = process.argv.slice(2);
if (!nodeDir) {
  console.error('usage: node openai_client.mjs PEAK MODEL NODE_DIR');
  process.exit(2);
}
const { default: OpenAI, AuthenticationError, BadRequestError } = requirePackage(nodeDir, 'openai');

runTest(async () => {
  const apiKey = crypto.randomBytes(16).toString('hex');
  const server = await startServer(peak, model, ['--api-key', apiKey]);
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0, timeout: 60000 });

    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    console.log(`models: ${JSON.stringify(ids)}`);
    check(ids.length === 1, 'one model is listed');
    check(ids[0] === path.basename(model), `the model's id is its file name ${path.basename(model)}`);
    check(models.data[0].object === 'model', 'a listed model has object "model"');

    // Greedy decoding: the same request, streamed or not, gives the same tokens.
    const request = {
      model: ids[0],
      messages: [{ role: 'system', content: 'You tell stories.' },
                 { role: 'user', content: 'Once upon a time there was a cat.' }],
      max_tokens: 24, temperature: 0, seed: 7,
    };
    const completion = await client.chat.completions.create(request);
    const choice = completion.choices[0];
    console.log(`completion: ${JSON.stringify(choice)} usage ${JSON.stringify(completion.usage)}`);
    check(completion.object === 'chat.completion', 'object is "chat.completion"');
    check(choice.message.role === 'assistant', 'the message is the assistant\'s');
    check(typeof choice.message.content === 'string' && choice.message.content.length > 0,
          'the answer is a non-empty string');
    check(['stop', 'length'].includes(choice.finish_reason), `finish_reason is stop or length`);
    const { usage } = completion;
    check(usage.prompt_tokens > 0 && usage.completion_tokens > 0, 'usage counts tokens');
    check(usage.completion_tokens <= request.max_tokens, 'at most max_tokens are generated');
    check(usage.total_tokens === usage.prompt_tokens + usage.completion_tokens, 'total_tokens is the sum');
    check(choice.finish_reason === 'stop' || usage.completion_tokens === request.max_tokens,
          'finish_reason "length" means max_tokens were generated');

    const stream = await client.chat.completions.create(
      { ...request, stream: true, stream_options: { include_usage: true } });
    let text = '', finishReason = null, streamUsage = null, chunks = 0;
    for await (const chunk of stream) {  // throws if the stream breaks off
      ++chunks;
      check(chunk.object === 'chat.completion.chunk', 'object is "chat.completion.chunk"');
      check(chunk.id === undefined || typeof chunk.id === 'string', 'a chunk id is a string');
      if (chunk.usage) streamUsage = chunk.usage;
      for (const c of chunk.choices) {
        check(c.index === 0, 'one choice, index 0');
        if (c.delta.role !== undefined) check(c.delta.role === 'assistant', 'the delta role is assistant');
        if (c.delta.content) text += c.delta.content;
        if (c.finish_reason) {
          check(finishReason === null, 'one chunk has a finish_reason');
          finishReason = c.finish_reason;
        }
      }
    }
    console.log(`stream: ${chunks} chunks, text ${JSON.stringify(text)}, finish ${finishReason}, ` +
                `usage ${JSON.stringify(streamUsage)}`);
    check(text.length > 0, 'the streamed deltas make a non-empty text');
    check(text === choice.message.content, 'the streamed text equals the non-streamed greedy answer');
    check(finishReason === choice.finish_reason, 'the stream ends with the same finish_reason');
    check(streamUsage !== null, 'include_usage adds a usage chunk');
    check(streamUsage.completion_tokens === usage.completion_tokens &&
          streamUsage.prompt_tokens === usage.prompt_tokens, 'the streamed usage equals the non-streamed one');

    // response_format json_schema: a small bounded schema the tiny model completes.
    const schema = {
      type: 'object',
      properties: {
        mood: { enum: ['happy', 'sad'] },
        age: { type: 'integer', minimum: 1, maximum: 9 },
        name: { type: 'string', maxLength: 6 },
      },
      required: ['mood', 'age', 'name'],
      additionalProperties: false,
    };
    const structured = await client.chat.completions.create({
      model: ids[0],
      messages: [{ role: 'user', content: 'Tell me about a pet.' }],
      max_tokens: 64, temperature: 0,
      response_format: { type: 'json_schema', json_schema: { name: 'pet', schema, strict: true } },
    });
    const answer = structured.choices[0];
    console.log(`json_schema: ${JSON.stringify(answer)}`);
    let pet = null;
    try {
      pet = JSON.parse(answer.message.content);
    } catch (e) {
      check(false, `the answer is JSON (${e.message})`);
    }
    check(pet !== null && typeof pet === 'object' && !Array.isArray(pet), 'the answer is a JSON object');
    check(Object.keys(pet).sort().join() === 'age,mood,name', 'it has exactly the properties mood, age and name');
    check(['happy', 'sad'].includes(pet.mood), 'mood is one of the enum');
    check(Number.isInteger(pet.age) && pet.age >= 1 && pet.age <= 9, 'age is an integer from 1 to 9');
    check(typeof pet.name === 'string' && [...pet.name].length <= 6, 'name is a string of at most 6 characters');
    check(answer.finish_reason === 'stop', 'the schema ends the answer: finish_reason "stop"');

    let badSchema = null;
    try {
      await client.chat.completions.create({
        ...request,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'no-such-type' } } },
      });
    } catch (e) {
      badSchema = e;
    }
    console.log(`bad schema: ${badSchema && `${badSchema.status}: ${badSchema.message}`}`);
    check(badSchema instanceof BadRequestError, 'an unusable schema raises BadRequestError (400)');
    check(badSchema.error?.param === 'response_format.json_schema.schema', 'the 400 names the schema');

    const wrong = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: `${apiKey}x`, maxRetries: 0 });
    let refusal = null;
    try {
      await wrong.chat.completions.create(request);
    } catch (e) {
      refusal = e;
    }
    console.log(`wrong key: ${refusal && `${refusal.constructor.name} ${refusal.status}: ${refusal.message}`}`);
    check(refusal instanceof AuthenticationError, 'a wrong API key raises AuthenticationError');
    check(refusal.status === 401, 'a wrong API key is HTTP 401');
    check(typeof refusal.error?.message === 'string' && refusal.error.message.length > 0,
          'the refusal carries {"error":{"message"}}');
  } finally {
    await server.stop();
  }
});
