// A stand-in for the `vscode` module, for the conversions' unit tests in plain node: the classes the
// extension converts, with VS Code's constructors. Importing this module installs it.

import Module = require('node:module');

export class LanguageModelTextPart {
  constructor(public value: string) {}
}
export class LanguageModelThinkingPart {
  constructor(public value: string | string[], public id?: string) {}
}
export class LanguageModelToolCallPart {
  constructor(public callId: string, public name: string, public input: object) {}
}
export class LanguageModelToolResultPart {
  constructor(public callId: string, public content: unknown[]) {}
}
export class LanguageModelPromptTsxPart {
  constructor(public value: unknown) {}
}
export class LanguageModelDataPart {
  constructor(public data: Uint8Array, public mimeType: string) {}
}
export enum LanguageModelChatMessageRole { User = 1, Assistant = 2 }
export enum LanguageModelChatToolMode { Auto = 1, Required = 2 }

const stub = {
  LanguageModelTextPart,
  LanguageModelThinkingPart,
  LanguageModelToolCallPart,
  LanguageModelToolResultPart,
  LanguageModelToolResultPart2: LanguageModelToolResultPart,
  LanguageModelPromptTsxPart,
  LanguageModelDataPart,
  LanguageModelChatMessageRole,
  LanguageModelChatToolMode,
};

const loader = Module as unknown as { _load(request: string, ...rest: unknown[]): unknown };
const load = loader._load;
loader._load = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? stub : load.call(this, request, ...rest);
};
