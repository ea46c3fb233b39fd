// The part of 'electron' this sandboxed preload compiles against (its tsconfig maps 'electron' here).
// Electron's own electron.d.ts pulls in all of Node's types, which a sandboxed preload does not have;
// against this file, a use of process, Buffer, require or another Electron module fails to compile.
// electron/preload-sandbox.spec.ts checks Electron's real objects still fit these shapes.

export interface IpcRendererEvent {
  readonly sender: unknown;
}

export declare const contextBridge: {
  exposeInMainWorld(apiKey: string, api: unknown): void;
};

export declare const ipcRenderer: {
  on<Args extends unknown[]>(channel: string, listener: (event: IpcRendererEvent, ...args: Args) => void): unknown;
  invoke<T>(channel: string, ...args: unknown[]): Promise<T>;
  send(channel: string, ...args: unknown[]): void;
};
