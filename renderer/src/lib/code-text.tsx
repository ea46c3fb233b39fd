// A message or hint from Warden names commands between backticks (`podman rm -f …`): shown as code,
// the rest as text. React escapes every part, so text from anywhere stays text.
export function CodeText({ text }: { text: string }) {
  return <>{text.split('`').map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part))}</>;
}
