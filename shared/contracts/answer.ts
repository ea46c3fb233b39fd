// A response type carried by a contract map (the UI methods, the agent routes) without a value:
// `response: answer<SandboxInfo>()` types the entry and is never read at run time.
export const answer = <T>(): T => undefined as T;
