import './vscode-stub';
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  LanguageModelChatToolMode,
  LanguageModelDataPart,
  LanguageModelPromptTsxPart,
  LanguageModelTextPart,
  LanguageModelThinkingPart,
  LanguageModelToolCallPart,
  LanguageModelToolResultPart,
} from './vscode-stub';
import { countedText, modelConfigurationOf, promptTsxText, ResponseStream, TokenEstimate, toWireMessages, toWireOptions } from '../../convert';
import { MemoryLog } from './log';

const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));
const msg = (role: number, content: unknown[], name?: string) => ({ role, content, name }) as any;

describe('request messages', () => {
  it('converts text, tool calls and roles, keeping names', () => {
    const wire = toWireMessages([
      msg(3, [new LanguageModelTextPart('be brief')]),
      msg(1, [new LanguageModelTextPart('run ls'), new LanguageModelTextPart('!')], 'me'),
      msg(2, [new LanguageModelTextPart('ok'), new LanguageModelToolCallPart('c1', 'symposium-agent-action', { kind: 'execute' })]),
    ], new MemoryLog());
    assert.deepEqual(wire, [
      { role: 'system', content: [{ type: 'text', value: 'be brief' }] },
      { role: 'user', name: 'me', content: [{ type: 'text', value: 'run ls' }, { type: 'text', value: '!' }] },
      { role: 'assistant', content: [
        { type: 'text', value: 'ok' },
        { type: 'tool_call', toolCallId: 'c1', toolName: 'symposium-agent-action', parameters: { kind: 'execute' } },
      ] },
    ]);
  });

  it('converts tool results: text, prompt-tsx, data and objects with a value', () => {
    const tsx = { node: { type: 1, ctor: 1, children: [
      { type: 2, text: 'line one', priority: 1 },
      { type: 1, ctor: 1, children: [{ type: 2, text: 'line two', lineBreakBefore: true }] },
    ] } };
    const [wire] = toWireMessages([msg(1, [new LanguageModelToolResultPart('c1', [
      new LanguageModelTextPart('Approved'),
      new LanguageModelPromptTsxPart(tsx),
      new LanguageModelDataPart(bytes('{"a":1}'), 'application/json'),
      { $mid: 21, value: 'plain object' },
    ])])], new MemoryLog());
    assert.deepEqual(wire.content, [{ type: 'tool_result', toolCallId: 'c1', content: [
      { type: 'text', value: 'Approved' },
      { type: 'text', value: 'line one\nline two' },
      { type: 'data', mimeType: 'application/json', data: Buffer.from('{"a":1}').toString('base64') },
      { type: 'text', value: 'plain object' },
    ] }]);
  });

  it('turns stateful_marker data into markers (the text after the first backslash)', () => {
    const log = new MemoryLog();
    const [wire] = toWireMessages([msg(2, [
      new LanguageModelDataPart(bytes('symposium-eliza\\tok.en\\x'), 'stateful_marker'),
      new LanguageModelDataPart(bytes('no backslash'), 'stateful_marker'),
      new LanguageModelTextPart('Hi'),
    ])], log);
    assert.deepEqual(wire.content, [{ type: 'marker', value: 'tok.en\\x' }, { type: 'text', value: 'Hi' }]);
    assert.ok(log.lines.some((l) => l.startsWith('warn: messages[0]: skipped')));
  });

  it('passes other data parts (cache_control, images) as base64 data', () => {
    const png = new Uint8Array([137, 80, 78, 71, 0, 255]);
    const [wire] = toWireMessages([msg(1, [
      new LanguageModelDataPart(bytes('ephemeral'), 'cache_control'),
      new LanguageModelDataPart(png, 'image/png'),
    ])], new MemoryLog());
    assert.deepEqual(wire.content, [
      { type: 'data', mimeType: 'cache_control', data: Buffer.from('ephemeral').toString('base64') },
      { type: 'data', mimeType: 'image/png', data: Buffer.from(png).toString('base64') },
    ]);
  });

  it('keeps thinking parts, joining an array value', () => {
    const [wire] = toWireMessages([msg(2, [new LanguageModelThinkingPart(['a', 'b']), new LanguageModelThinkingPart('c')])], new MemoryLog());
    assert.deepEqual(wire.content, [{ type: 'thinking', value: 'ab' }, { type: 'thinking', value: 'c' }]);
  });

  it('skips and logs what it does not know', () => {
    const log = new MemoryLog();
    const [wire] = toWireMessages([msg(1, [{ some: 'thing' }, new LanguageModelTextPart('x')])], log);
    assert.deepEqual(wire.content, [{ type: 'text', value: 'x' }]);
    assert.match(log.lines.join('\n'), /skipped a part .*"some":"thing"/);
  });
});

describe('options and token counts', () => {
  it('passes the tools and the tool mode', () => {
    assert.deepEqual(toWireOptions({
      tools: [{ name: 't', description: 'd', inputSchema: { type: 'object' } }, { name: 'u', description: 'e' }],
      toolMode: LanguageModelChatToolMode.Required as any,
    }), {
      tools: [{ name: 't', description: 'd', inputSchema: { type: 'object' } }, { name: 'u', description: 'e', inputSchema: {} }],
      toolMode: 'required',
    });
    assert.deepEqual(toWireOptions({ toolMode: LanguageModelChatToolMode.Auto as any }), { tools: [], toolMode: 'auto' });
  });

  it("passes what the user chose in the model's own controls as VS Code gives it, and nothing when it gives none", () => {
    assert.deepEqual(modelConfigurationOf({ toolMode: 1, modelConfiguration: { mode: 'plan', effort: 'high' } }), { modelConfiguration: { mode: 'plan', effort: 'high' } });
    assert.deepEqual(modelConfigurationOf({ toolMode: 1 }), {});
    assert.deepEqual(modelConfigurationOf({ modelConfiguration: {} }), {});
    assert.deepEqual(modelConfigurationOf({ modelConfiguration: ['plan'] }), {});
  });

  it('counts a message by its text parts', () => {
    assert.equal(countedText('abc'), 'abc');
    assert.equal(countedText(msg(1, [new LanguageModelTextPart('a'), new LanguageModelToolCallPart('c', 'n', {}), new LanguageModelTextPart('b')])), 'ab');
  });

  it('estimates about four UTF-8 bytes a token, at least one', () => {
    const tokens = new TokenEstimate();
    assert.equal(tokens.count(''), 1);
    assert.equal(tokens.count('abcd'), 1);
    assert.equal(tokens.count('abcde'), 2);
    assert.equal(tokens.count('é'.repeat(4)), 2, 'bytes, not characters');
    assert.equal(tokens.count('abcde'), 2, 'the same when remembered');
  });

  it('divides by the bytes per token the agent\'s usage showed', () => {
    const tokens = new TokenEstimate();
    assert.equal(tokens.count('x'.repeat(1000)), 250);
    assert.equal(tokens.count('x'.repeat(1000), 2.5), 400, 'a remembered text, another ratio');
    assert.equal(tokens.count('x', 2.5), 1);
  });

  it('remembers a bounded number of texts, forgetting the least recently asked first', () => {
    const tokens = new TokenEstimate(3, 1_000);
    ['a', 'b', 'c', 'a', 'd'].forEach((t) => tokens.count(t));
    assert.deepEqual(tokens.texts(), ['c', 'a', 'd']);
    const byChars = new TokenEstimate(100, 10);
    ['x'.repeat(6), 'y'.repeat(3), 'z'.repeat(20)].forEach((t) => byChars.count(t));
    assert.deepEqual(byChars.texts(), [], 'a text over the bound is not kept');
    ['x'.repeat(6), 'y'.repeat(3), 'w'].forEach((t) => byChars.count(t));
    assert.deepEqual(byChars.texts(), ['xxxxxx', 'yyy', 'w']);
    byChars.count('v'.repeat(2));
    assert.deepEqual(byChars.texts(), ['yyy', 'w', 'vv']);
  });

  it('renders prompt-tsx JSON to its text', () => {
    assert.equal(promptTsxText('just text'), 'just text');
    assert.equal(promptTsxText({ node: { type: 1, children: [{ type: 2, text: 'a' }, { type: 2, text: 'b', lineBreakBefore: true }] } }), 'a\nb');
  });
});

describe('response parts', () => {
  const collect = (thinking: 'quote' | 'text' | 'hidden', thinkingPart: any = LanguageModelThinkingPart) => {
    const parts: unknown[] = [];
    const stream = new ResponseStream('model-x', thinking, (p) => parts.push(p), new MemoryLog(), thinkingPart);
    return { parts, stream };
  };
  const texts = (parts: unknown[]) => parts.map((p) => (p as LanguageModelTextPart).value).join('');

  it('streams text, tool calls and markers in order', () => {
    const { parts, stream } = collect('quote');
    stream.push({ type: 'marker', value: 'tok' });
    stream.push({ type: 'text', value: 'Hi' });
    stream.push({ type: 'tool_call', toolCallId: 'sym-1', toolName: 'symposium-agent-action', parameters: { kind: 'execute' } });
    assert.deepEqual(parts, [
      new LanguageModelDataPart(Buffer.from('model-x\\tok'), 'stateful_marker'),
      new LanguageModelTextPart('Hi'),
      new LanguageModelToolCallPart('sym-1', 'symposium-agent-action', { kind: 'execute' }),
    ]);
  });

  it('hands usage to VS Code as a `usage` data part in the JSON Copilot Chat reads', () => {
    const { parts, stream } = collect('quote');
    stream.push({ type: 'usage', promptTokens: 46122, completionTokens: 15, totalTokens: 46137, cachedTokens: 12 });
    const [part] = parts as InstanceType<typeof LanguageModelDataPart>[];
    assert.equal(part.mimeType, 'usage');
    assert.deepEqual(JSON.parse(Buffer.from(part.data).toString('utf8')), {
      prompt_tokens: 46122,
      completion_tokens: 15,
      total_tokens: 46137,
      prompt_tokens_details: { cached_tokens: 12 },
    });
  });

  it("keeps an agent's edits for review, and gives VS Code nothing for them (the chat shows the diff as text)", () => {
    const parts: unknown[] = [];
    const edits: unknown[] = [];
    const stream = new ResponseStream('model-x', 'quote', (p) => parts.push(p), new MemoryLog(), null, (e) => edits.push(e));
    const edit = { type: 'edit' as const, path: '/w/a.py', oldText: 'a', newText: 'b', conversation: 'c1' };
    stream.push(edit);
    assert.deepEqual(parts, []);
    assert.deepEqual(edits, [edit]);
  });

  it('reports thoughts as thinking parts where VS Code has them', () => {
    const { parts, stream } = collect('hidden');
    stream.push({ type: 'thinking', value: 'hmm' });
    stream.push({ type: 'text', value: 'Hi' });
    assert.deepEqual(parts, [new LanguageModelThinkingPart('hmm'), new LanguageModelTextPart('Hi')]);
  });

  it('else shows them per symposium.thinking', () => {
    const run = (mode: 'quote' | 'text' | 'hidden') => {
      const { parts, stream } = collect(mode, null);
      stream.push({ type: 'thinking', value: 'one\ntwo' });
      stream.push({ type: 'thinking', value: ' three' });
      stream.push({ type: 'text', value: 'Answer' });
      assert.ok(parts.every((p) => p instanceof LanguageModelTextPart));
      return texts(parts);
    };
    assert.equal(run('quote'), '> *Thinking:* one\n> two three\n\nAnswer');
    assert.equal(run('text'), 'one\ntwo three\n\nAnswer');
    assert.equal(run('hidden'), 'Answer');
  });
});
