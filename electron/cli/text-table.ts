// The CLI's plain tables (`sandbox ls`, `sandbox snapshots`): columns padded to their widest cell,
// two spaces apart, no trailing blanks. One layout, so every listing reads the same.
export function alignColumns(rows: string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, col) => cell.padEnd(widths[col]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}
