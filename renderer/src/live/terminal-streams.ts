// Terminal output by stream id, routed outside React straight to the xterm that owns it. Output
// that arrives before the view attached (the prompt) is held until it does.
type Sink = { write(data: string): void; exit(code: number | null): void };

export class TerminalStreams {
  private readonly sinks = new Map<string, Sink>();
  private readonly early = new Map<string, string[]>();

  attach(id: string, sink: Sink): () => void {
    this.sinks.set(id, sink);
    for (const data of this.early.get(id) ?? []) sink.write(data);
    this.early.delete(id);
    return () => {
      if (this.sinks.get(id) === sink) this.sinks.delete(id);
    };
  }

  data(id: string, data: string): void {
    const sink = this.sinks.get(id);
    if (sink) sink.write(data);
    else {
      const held = this.early.get(id) ?? [];
      if (held.length < 256) held.push(data);
      this.early.set(id, held);
    }
  }

  exit(id: string, code: number | null): void {
    this.sinks.get(id)?.exit(code);
    this.early.delete(id);
  }
}
