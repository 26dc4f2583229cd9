import './vscode-stub';
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentEdits, textBefore } from '../../edits';
import { EditPart } from '../../wire';

const edit = (newText: string, oldText?: string, conversation = 'c1'): EditPart => ({ type: 'edit', path: '/w/app.py', newText, oldText, conversation });

describe("an agent's edits, undone", () => {
  it('puts back the whole file of an edit that carried it (Codex)', () => {
    assert.deepEqual(textBefore('a = 1\nb = 20\n', [edit('a = 1\nb = 20\n', 'a = 1\nb = 2\n')]), { text: 'a = 1\nb = 2\n', lost: 0 });
  });

  it('undoes region edits (Claude Code), the last first', () => {
    const now = 'x = 0\na = 1\nb = 30\nc = 3\n';
    const edits = [edit('a = 1\nb = 20\nc = 3', 'a = 1\nb = 2\nc = 3'), edit('b = 30', 'b = 20')];
    assert.deepEqual(textBefore(now, edits), { text: 'x = 0\na = 1\nb = 2\nc = 3\n', lost: 0 });
  });

  it('a file the agent created did not exist before, unless it changed since', () => {
    assert.deepEqual(textBefore('new\n', [edit('new\n')]), { text: undefined, lost: 0 });
    assert.deepEqual(textBefore('new, then mine\n', [edit('new\n')]), { text: 'new, then mine\n', lost: 1 });
  });

  it('says what it could not undo: the file changed since', () => {
    assert.deepEqual(textBefore('b = 99\n', [edit('b = 20', 'b = 2')]), { text: 'b = 99\n', lost: 1 });
    assert.deepEqual(textBefore(undefined, [edit('b = 20', 'b = 2')]), { text: undefined, lost: 1 });
  });

  it('keeps the edits of the last conversations, by conversation, the latest first', () => {
    const edits = new AgentEdits();
    edits.record('Codex', edit('1', '0', 'c1'));
    edits.record('Claude', edit('2', '1', 'c2'));
    edits.record('Codex', edit('3', '2', 'c1'));
    assert.deepEqual(edits.list().map((c) => [c.id, c.model, c.edits.map((e) => e.newText)]), [['c1', 'Codex', ['1', '3']], ['c2', 'Claude', ['2']]]);
    for (let n = 0; n < 30; n++) {
      edits.record('Codex', edit('x', 'y', `many${n}`));
    }
    assert.equal(edits.list().length, 20);
    assert.equal(edits.get('c1'), undefined, 'the least recently edited forgotten first');
  });
});
