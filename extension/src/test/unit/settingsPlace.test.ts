// Where Symposium's machine settings must be for a window to apply them: the decision to tell the
// user, from what `inspect()` reports and which settings files name the keys.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { fileNames, ignoredSettings, SettingPlace, userSettingsFile } from '../../settingsPlace';

const place = (key: string, fields: Partial<SettingPlace> = {}): SettingPlace => ({
  key, scope: 'machine', globalValue: undefined, workspaceValue: undefined, inUserFile: false, inWorkspaceFile: false, ...fields,
});

describe('machine settings where this window cannot apply them', () => {
  it('in a remote window: values in the User settings that the window does not apply', () => {
    const ignored = ignoredSettings([place('agents', { inUserFile: true }), place('backend.command', { inUserFile: true, globalValue: '/x' }), place('python')], 'ssh-remote');
    assert.deepEqual(ignored?.keys, ['symposium.agents']);
    assert.equal(ignored?.open, 'remote');
    assert.match(ignored?.message ?? '', /symposium\.agents is in your User settings, which VS Code does not apply to machine settings in a remote window \(ssh-remote\)\. Put it in the Remote settings/);
  });

  it('nothing to say when the window applies them, or in a local window where User settings apply', () => {
    assert.equal(ignoredSettings([place('agents', { inUserFile: true, globalValue: [] })], 'wsl'), undefined);
    assert.equal(ignoredSettings([place('agents', { inUserFile: true })], undefined), undefined);
    assert.equal(ignoredSettings([], 'wsl'), undefined);
  });

  it('machine-scoped values in a workspace are ignored in every window; machine-overridable ones are not', () => {
    const ignored = ignoredSettings([place('agents', { inWorkspaceFile: true }), place('backend.command', { inWorkspaceFile: true }), place('traceDir', { scope: 'machine-overridable', inWorkspaceFile: true })], undefined);
    assert.deepEqual(ignored?.keys, ['symposium.agents', 'symposium.backend.command']);
    assert.equal(ignored?.open, 'user');
    assert.match(ignored?.message ?? '', /are in this workspace's settings, where VS Code ignores them.*Put them in your User settings/);
    assert.equal(ignoredSettings([place('agents', { inWorkspaceFile: true })], 'codespaces')?.open, 'remote');
  });

  it('reads which keys a settings file names (JSON with comments), and where the User settings file is', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-settings-'));
    const file = path.join(dir, 'settings.json');
    fs.writeFileSync(file, '{\n  // mine\n  "symposium.agents": [ ],\n  "symposium.traceDir" : "/tmp",\n}\n');
    assert.ok(fileNames(file, 'agents'));
    assert.ok(fileNames(file, 'traceDir'));
    assert.ok(!fileNames(file, 'backend.command'));
    assert.ok(!fileNames(path.join(dir, 'none.json'), 'agents'));
    assert.equal(userSettingsFile('/data/User/globalStorage/symposium.symposium'), path.join('/data/User', 'settings.json'));
    fs.rmSync(dir, { recursive: true });
  });
});
