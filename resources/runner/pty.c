/*
 * Terminals: an EXEC with the pty flag runs its command on a pseudo-terminal opened here, inside
 * the sandbox, and its bytes travel over the runner's channel like any command's output (with the
 * same credit), instead of through Podman's TTY relay. RESIZE sets the terminal's size.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "runner.h"

int pty_open(int *master, int *slave) {
  int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return -1;
  char name[128];
  if (grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof name) != 0) {
    close(m);
    return -1;
  }
  int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0) {
    close(m);
    return -1;
  }
  *master = m;
  *slave = s;
  return 0;
}

void pty_resize(int master, uint16_t cols, uint16_t rows) {
  struct winsize ws = {.ws_row = rows, .ws_col = cols};
  if (master >= 0) ioctl(master, TIOCSWINSZ, &ws);
}
