import { useStore } from './store/index.js';
import { EngineBanner } from './features/shell/EngineBanner.js';
import { Sidebar } from './features/shell/Sidebar.js';
import { Toasts } from './features/shell/Toasts.js';
import { SandboxList } from './features/sandboxes/SandboxList.js';
import { CreateDialog } from './features/sandboxes/CreateDialog.js';
import { DestroyDialog } from './features/sandboxes/DestroyDialog.js';
import { SandboxDetail } from './features/sandbox-detail/SandboxDetail.js';
import { RunsView } from './features/runs/RunsView.js';
import { LedgerView } from './features/ledger/LedgerView.js';
import { ApprovalsPanel } from './features/approvals/ApprovalsPanel.js';

function CurrentView() {
  const view = useStore((s) => s.view);
  switch (view.name) {
    case 'sandboxes':
      return <SandboxList />;
    case 'sandbox':
      return <SandboxDetail id={view.id} />;
    case 'runs':
      return <RunsView />;
    case 'ledger':
      return <LedgerView />;
  }
}

export function App() {
  const dialog = useStore((s) => s.dialog);
  return (
    <>
      <div id="app-shell" className="shell">
        <Sidebar />
        <main className="main">
          <ApprovalsPanel />
          <EngineBanner />
          <CurrentView />
        </main>
      </div>
      {dialog?.kind === 'create' ? <CreateDialog /> : null}
      {dialog?.kind === 'destroy' ? <DestroyDialog id={dialog.id} /> : null}
      <Toasts />
    </>
  );
}
