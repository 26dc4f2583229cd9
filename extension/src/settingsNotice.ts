// Tells the user, once for a given set, when Symposium's machine settings are where this window
// cannot apply them (`ignoredSettings` in settingsPlace.ts decides; README, "Where the settings go").

import * as path from 'node:path';
import * as vscode from 'vscode';
import { fileNames, ignoredSettings, MACHINE_SETTINGS, serverDataFolder, userSettingsFile } from './settingsPlace';

const SHOWN = 'symposium.ignoredSettingsShown';

export async function noticeIgnoredSettings(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): Promise<void> {
  const storage = context.globalStorageUri.fsPath;
  const remote = vscode.env.remoteName ?? (context.globalStorageUri.scheme === 'file' && serverDataFolder(storage) ? 'this server' : undefined);
  const config = vscode.workspace.getConfiguration('symposium');
  const workspaceFiles = [
    ...(vscode.workspace.workspaceFile?.scheme === 'file' ? [vscode.workspace.workspaceFile.fsPath] : []),
    ...(vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => path.join(f.uri.fsPath, '.vscode', 'settings.json')),
  ];
  const places = MACHINE_SETTINGS.map(({ key, scope }) => {
    const seen = config.inspect(key);
    return {
      key,
      scope,
      globalValue: seen?.globalValue,
      workspaceValue: seen?.workspaceValue ?? seen?.workspaceFolderValue,
      inUserFile: Boolean(remote) && fileNames(userSettingsFile(storage), key),
      inWorkspaceFile: workspaceFiles.some((file) => fileNames(file, key)),
    };
  });
  const ignored = ignoredSettings(places, remote);
  if (!ignored) {
    return;
  }
  log.warn(ignored.message);
  const key = ignored.keys.join(',');
  if (context.globalState.get<string>(SHOWN) === key) {
    return; // said once already
  }
  await context.globalState.update(SHOWN, key);
  const open = ignored.open === 'remote' ? 'Open Remote Settings' : 'Open User Settings';
  const choice = await vscode.window.showWarningMessage(`Symposium: ${ignored.message}`, open);
  if (choice === open) {
    await vscode.commands.executeCommand(ignored.open === 'remote' ? 'workbench.action.openRemoteSettingsFile' : 'workbench.action.openSettingsJson');
  }
}
