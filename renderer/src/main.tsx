// Boot: pick the door (the Electron preload's window.warden, or the web shell's socket), log in
// once if the web shell needs it, then start the event bridge and render.
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { z } from 'zod';
import type { WardenBridge } from '../../shared/contracts/bridge.js';
import { WardenClient } from './api/client.js';
import { login, takeLoginCode, WebBridge } from './api/web-bridge.js';
import { StatsBuffer } from './live/stats-buffer.js';
import { TerminalStreams } from './live/terminal-streams.js';
import { startSync } from './live/sync.js';
import { useStore } from './store/index.js';
import { ServicesContext, type Services } from './services.js';
import { App } from './App.js';
import { LoginView } from './features/login/LoginView.js';
import './styles.css';

declare global {
  interface Window {
    warden?: WardenBridge;
  }
}

// The CSP forbids eval: tell zod not to probe for it (the probe trips Trusted Types).
z.config({ jitless: true });

function startServices(bridge: WardenBridge): Services {
  const services: Services = { client: new WardenClient(bridge), stats: new StatsBuffer(), terminals: new TerminalStreams() };
  startSync(services.client, useStore, services.stats, services.terminals);
  return services;
}

function WebRoot({ bridge, loginError }: { bridge: WebBridge; loginError: string | null }) {
  const [services] = useState(() => startServices(bridge));
  const link = useStore((s) => s.link);
  useEffect(() => bridge.connect(), [bridge]);
  if (link === 'unauthorized') return <LoginView reason={loginError ?? undefined} onLoggedIn={() => bridge.connect()} />;
  return (
    <ServicesContext.Provider value={services}>
      <App />
    </ServicesContext.Provider>
  );
}

async function boot(): Promise<void> {
  const root = createRoot(document.getElementById('root')!);
  if (window.warden) {
    const services = startServices(window.warden);
    root.render(
      <StrictMode>
        <ServicesContext.Provider value={services}>
          <App />
        </ServicesContext.Provider>
      </StrictMode>,
    );
    return;
  }
  // The code leaves the address bar before any request is made with it.
  const code = takeLoginCode();
  const failure = code ? await login(code).catch(() => null) : null;
  const bridge = new WebBridge();
  root.render(
    <StrictMode>
      <WebRoot bridge={bridge} loginError={failure ? `That login link did not work: ${failure.message}` : null} />
    </StrictMode>,
  );
}

void boot();
