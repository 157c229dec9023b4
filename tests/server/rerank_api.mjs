// `peak serve` running a reranker (a random ms-marco-MiniLM-L6-v2 with BGE's
// WordPiece vocabulary), through plain fetch (OpenAI's client has no rerank):
// POST /v1/rerank as llama.cpp's server and Jina's API take it. The results are
// checked against `peak rerank` for the same query and documents (order,
// index, relevance_score, document text), top_n against `peak rerank --top-n`,
// usage against `peak tokenize` ([CLS] query [SEP] document [SEP] per
// document, as llama.cpp counts); bad input is a 400 in OpenAI's error shape
// naming the field and index, and the other models' routes say this is a reranker.
//   node rerank_api.mjs PEAK RERANKER
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { check, runTest, startServer } from './harness.mjs';

const [peak, model] = process.argv.slice(2);
if (!model) {
  console.error('usage: node rerank_api.mjs PEAK RERANKER');
  process.exit(2);
}

const query = 'what is the capital of france?';
const documents = ['Paris is the capital of France.', 'bananas are yellow', 'she said "hi" \\ then left',
  'the capital of france', 'Berlin is the capital of Germany.'];

// `peak rerank` on the query and documents: {"results": [...]}, best first.
function peakRerank(args = []) {
  const prompts = documents.flatMap((d) => ['-p', d]);
  return JSON.parse(execFileSync(peak, ['rerank', '-m', model, '-t', '1', '--query', query, ...prompts, ...args],
                                 { encoding: 'utf8' }));
}

// The tokens of a text without special tokens, as `peak tokenize` gives them.
function tokenCount(text) {
  const ids = JSON.parse(execFileSync(peak, ['tokenize', '-m', model, '-p', text, '--ids', '--no-bos',
                                             '--no-parse-special', '--no-escape'], { encoding: 'utf8' }));
  return ids.length;
}

async function post(url, body) {
  const response = await fetch(url, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  check(/^application\/json/.test(response.headers.get('content-type')), `${url}: a JSON answer`);
  return { status: response.status, json: await response.json() };
}

// The answer's shape, then its results against peak rerank's (as many as `expected` holds).
function checkResults(answer, expected, promptTokens, withText, what) {
  check(answer.status === 200, `${what}: 200 (${JSON.stringify(answer.json)})`);
  const v = answer.json;
  check(v.model === path.basename(model) && v.object === 'list', `${what}: model and object "list"`);
  check(v.usage.prompt_tokens === promptTokens && v.usage.total_tokens === promptTokens,
        `${what}: usage counts ${promptTokens} tokens (${JSON.stringify(v.usage)})`);
  check(v.results.length === expected.length, `${what}: ${expected.length} results`);
  v.results.forEach((r, k) => {
    const e = expected[k];
    check(r.index === e.index, `${what}: result ${k} is document ${e.index} (as peak rerank), not ${r.index}`);
    check(Math.abs(r.relevance_score - e.relevance_score) <= 1e-6 * Math.max(1, Math.abs(e.relevance_score)),
          `${what}: document ${r.index} scores ${e.relevance_score} as with peak rerank, not ${r.relevance_score}`);
    if (withText) {
      check(r.document?.text === documents[r.index], `${what}: result ${k} holds document ${r.index}'s text`);
    } else {
      check(!('document' in r), `${what}: result ${k} holds no document`);
    }
    if (k > 0) check(v.results[k - 1].relevance_score >= r.relevance_score, `${what}: best first`);
  });
}

async function expectError(url, body, param, pattern, what) {
  const answer = await post(url, body);
  const e = answer.json.error;
  console.log(`${what}: ${answer.status} ${e && e.message}`);
  check(answer.status === 400 && e && e.type === 'invalid_request_error' && e.code === 400,
        `${what}: a 400 in OpenAI's error shape (${JSON.stringify(answer.json)})`);
  check(e.param === param, `${what}: param ${param}, not ${e.param}`);
  check(pattern.test(e.message), `${what}: the message '${e.message}' matches ${pattern}`);
}

runTest(async () => {
  const expected = peakRerank().results;
  const expectedTop2 = peakRerank(['--top-n', '2']).results;
  check(expected.length === documents.length && expectedTop2.length === 2, 'peak rerank answers');
  const queryTokens = tokenCount(query);
  const promptTokens = documents.reduce((sum, d) => sum + queryTokens + tokenCount(d) + 3, 0);
  const server = await startServer(peak, model, ['-t', '1', '--parallel', '2']);
  try {
    const url = `${server.url}/v1/rerank`;
    const all = await post(url, { model: 'ms-marco', query, documents });
    checkResults(all, expected, promptTokens, true, 'all');
    console.log(`results ${JSON.stringify(all.json.results.map((r) => [r.index, r.relevance_score]))}: as peak rerank's`);

    checkResults(await post(url, { query, documents, top_n: 2 }), expectedTop2, promptTokens, true, 'top_n 2');
    checkResults(await post(url, { query, documents, top_n: 50 }), expected, promptTokens, true, 'top_n 50');
    checkResults(await post(url, { query, documents, return_documents: false }), expected, promptTokens, false,
                 'return_documents false');
    const objects = documents.map((text, i) => (i % 2 ? { text } : text));
    checkResults(await post(`${server.url}/rerank`, { query, documents: objects }), expected, promptTokens, true,
                 '/rerank, {"text"} documents');
    checkResults(await post(`${server.url}/v1/reranking`, { query, documents }), expected, promptTokens, true,
                 '/v1/reranking');

    await expectError(url, { query, documents: ['a', 'b', 'c', ''] }, 'documents[3]', /'documents\[3\]' is an empty string/,
                      'an empty document');
    await expectError(url, { query, documents: ['a', '   '] }, 'documents[1]', /'documents\[1\]' gives no tokens/,
                      'a document of spaces');
    await expectError(url, { documents: ['a'] }, 'query', /'query' is required/, 'no query');
    await expectError(url, { query, documents: ['a'], top_n: 0 }, 'top_n', /'top_n' must be between 1 and/, 'top_n 0');
    await expectError(url, { query, documents: ['a'], top_n: 1.5 }, 'top_n', /'top_n' must be an integer/, 'top_n 1.5');
    await expectError(url, { query, documents: ['a', 'word '.repeat(600)] }, 'documents[1]',
                      /'documents\[1\]' with the query is \d+ tokens as the model reads them; the reranker takes at most 512/,
                      'a document too long');
    await expectError(url, { query, documents: Array(1001).fill('a') }, 'documents',
                      /'documents' has 1001 documents; at most 1000 go in one request/, 'too many documents');
    await expectError(`${server.url}/v1/embeddings`, { input: 'x' }, 'model',
                      /this server runs a reranker \(bert\), which makes no embeddings: use POST \/v1\/rerank/,
                      'embeddings on a reranker');
    await expectError(`${server.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'Hi' }] }, 'model',
                      /this server runs a reranker \(bert\), which generates no text/, 'chat on a reranker');
  } finally {
    await server.stop();
  }
});
