// `peak serve` through OpenAI's own Node client (the npm package `openai`):
// a chat completion, the same one streamed (its deltas must make the same
// greedy text), an answer held to a JSON Schema (response_format json_schema),
// the model list, and a wrong API key refused with 401. With TOOL_MODEL (the
// scripted Qwen3 of tests/chat, which answers "Blue." and writes Hermes calls
// under a grammar), a tool call's round trip, whole and streamed: tools ->
// tool_calls (finish_reason "tool_calls") -> the result sent back -> the answer.
//   node openai_client.mjs PEAK MODEL NODE_DIR [TOOL_MODEL]
// NODE_DIR holds node_modules (npm ci of package.json, in the build tree).
import crypto from 'node:crypto';
import path from 'node:path';
import { check, requirePackage, runTest, startServer } from './harness.mjs';

const [peak, model, nodeDir, toolModel] = process.argv.slice(2);
if (!nodeDir) {
  console.error('usage: node openai_client.mjs PEAK MODEL NODE_DIR [TOOL_MODEL]');
  process.exit(2);
}
const { default: OpenAI, AuthenticationError, BadRequestError } = requirePackage(nodeDir, 'openai');

const tools = [{
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', enum: ['Paris', 'Oslo'] } },
      required: ['city'],
      additionalProperties: false,
    },
  },
}];

// The call an answer made, gathered from a stream's delta.tool_calls: the
// first chunk of a call has its id, type and name (arguments ""), the next
// ones its arguments.
async function streamedAnswer(stream) {
  let content = '', finishReason = null;
  const calls = [];
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      if (c.delta.content) content += c.delta.content;
      for (const call of c.delta.tool_calls ?? []) {
        if (call.id !== undefined) {
          check(call.index === calls.length, 'a call opens with the next index');
          check(call.type === 'function', 'a streamed call has type "function"');
          check(call.function.arguments === '', 'a call opens with arguments ""');
          calls.push({ id: call.id, type: call.type, function: { name: call.function.name, arguments: '' } });
        } else {
          check(call.index === calls.length - 1, 'arguments follow their call');
          calls[call.index].function.arguments += call.function.arguments;
        }
      }
      if (c.finish_reason) finishReason = c.finish_reason;
    }
  }
  return { content, calls, finishReason };
}

function checkWeatherCall(calls) {
  check(calls.length === 1, 'one call');
  check(typeof calls[0].id === 'string' && calls[0].id.length > 0, 'the call has an id');
  check(calls[0].type === 'function' && calls[0].function.name === 'get_weather', 'it calls get_weather');
  const args = JSON.parse(calls[0].function.arguments);
  check(['Paris', 'Oslo'].includes(args.city) && Object.keys(args).length === 1,
        'its arguments follow the tool\'s schema');
}

// tools -> tool_calls -> the tool's result -> the answer, whole and streamed.
async function toolRoundTrip(toolPeak, modelPath) {
  const server = await startServer(toolPeak, modelPath);
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60000 });
    const question = { role: 'user', content: 'Weather in Paris?' };
    const base = { model: 'x', tools, max_tokens: 200, temperature: 0 };
    const first = await client.chat.completions.create({ ...base, messages: [question], tool_choice: 'required' });
    const called = first.choices[0];
    console.log(`tool call: ${JSON.stringify(called)}`);
    check(called.finish_reason === 'tool_calls', 'an answer that calls ends with finish_reason "tool_calls"');
    check(called.message.content === null, 'an answer of calls alone has content null');
    checkWeatherCall(called.message.tool_calls);
    const history = [question, called.message,
                     { role: 'tool', tool_call_id: called.message.tool_calls[0].id, content: 'Sunny, 21 C' }];
    const second = await client.chat.completions.create({ ...base, messages: history });
    console.log(`answer to the result: ${JSON.stringify(second.choices[0])}`);
    check(second.choices[0].message.content === 'Blue.', 'the result is answered');
    check(second.choices[0].finish_reason === 'stop', 'the answer ends with "stop"');
    check(!second.choices[0].message.tool_calls, 'the answer made no call');

    const streamed = await streamedAnswer(await client.chat.completions.create(
      { ...base, messages: [question], tool_choice: 'required', stream: true }));
    console.log(`streamed tool call: ${JSON.stringify(streamed)}`);
    check(streamed.content === '', 'no markup streams as content');
    check(streamed.finishReason === 'tool_calls', 'the stream ends with finish_reason "tool_calls"');
    checkWeatherCall(streamed.calls);
    check(streamed.calls[0].function.arguments === called.message.tool_calls[0].function.arguments,
          'the streamed arguments equal the greedy whole ones');
    const streamedHistory = [question, { role: 'assistant', content: null, tool_calls: streamed.calls },
                             { role: 'tool', tool_call_id: streamed.calls[0].id, content: 'Sunny, 21 C' }];
    const answer = await streamedAnswer(await client.chat.completions.create(
      { ...base, messages: streamedHistory, stream: true }));
    console.log(`streamed answer: ${JSON.stringify(answer)}`);
    check(answer.content === 'Blue.' && answer.calls.length === 0, 'the streamed result is answered');
    check(answer.finishReason === 'stop', 'the streamed answer ends with "stop"');
  } finally {
    await server.stop();
  }
}

runTest(async () => {
  if (toolModel) await toolRoundTrip(peak, toolModel);
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
