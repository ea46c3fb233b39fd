// Time since a sandbox started, ticking once a second (on the shared ticker) by writing its own text node.
import { useEffect, useRef } from 'react';
import { formatDuration } from '../../lib/format.js';
import { everySecond } from '../../lib/second-ticker.js';

export function Uptime({ since }: { since: string | null }) {
  const el = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    if (!since) return;
    const start = Date.parse(since);
    return everySecond(() => {
      if (el.current) el.current.textContent = formatDuration(Date.now() - start);
    });
  }, [since]);
  return <span ref={el}>{since ? '' : '–'}</span>;
}
