// Time since a sandbox started, ticking locally once a second by writing its own text node.
import { useEffect, useRef } from 'react';
import { formatDuration } from '../../lib/format.js';

export function Uptime({ since }: { since: string | null }) {
  const el = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    if (!since) return;
    const start = Date.parse(since);
    const tick = () => {
      if (el.current) el.current.textContent = formatDuration(Date.now() - start);
    };
    tick();
    const timer = setInterval(tick, 1000);
    return () => clearInterval(timer);
  }, [since]);
  return <span ref={el}>{since ? '' : '–'}</span>;
}
