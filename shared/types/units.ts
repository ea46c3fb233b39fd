// Human sizes ("512m", "1.5g", "2048k", "1073741824") to bytes, the way podman's --memory reads them,
// and bytes back to a size for a person.

const UNIT_FACTORS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
};

const SIZE_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i;

/** Returns the byte count, or null when the text is not a size. */
export function parseByteSize(text: string): number | null {
  const match = SIZE_PATTERN.exec(text);
  if (!match) return null;
  const factor = UNIT_FACTORS[match[2]!.toLowerCase()];
  if (factor === undefined) return null;
  const bytes = Math.round(Number(match[1]) * factor);
  return Number.isFinite(bytes) ? bytes : null;
}

/** Bytes for a person, in binary units ("512 MiB", "1.5 GiB"); the CLI's tables and the UI both use it. */
export function formatByteSize(bytes: number): string {
  if (!Number.isFinite(bytes)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value.toFixed(0) : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
