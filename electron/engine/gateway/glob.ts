// Globs for policy rules. For commands and arguments `*` matches anything; for paths `*` stays in
// one component and `**` crosses components. A backslash makes the next character plain, so a rule
// can name the text `/*` itself ('/\*') instead of every absolute path.
export function globToRegExp(glob: string, pathMode: boolean): RegExp {
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\' && i + 1 < glob.length) re += glob[++i]!.replace(/[.*?+^${}()|[\]\\/]/g, '\\$&');
    else if (c === '*') {
      if (pathMode && glob[i + 1] === '*') {
        i++;
        if (glob[i + 1] === '/') {
          i++;
          re += '(?:.*/)?';
        } else re += '.*';
      } else re += pathMode ? '[^/]*' : '.*';
    } else if (c === '?') re += pathMode ? '[^/]' : '.';
    else if (c === '[') {
      const close = glob.indexOf(']', i + 1);
      if (close < 0) re += '\\[';
      else {
        const body = glob.slice(i + 1, close).replace(/\\/g, '\\\\');
        re += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = close;
      }
    } else re += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`${re}$`, 's');
}
