/* The terminal: which terminfo entry to use, curses on and off.
 *
 * Terminal emulators newer than the host's terminfo (xterm-ghostty,
 * xterm-kitty, alacritty on a Debian 12 server) set a TERM that ncurses
 * cannot load; initscr() would then exit with a message written to a
 * stderr that is already redirected.  Like most full-screen tools, fall
 * back to an entry every such emulator understands, and say so. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "screens.h"

/* After screens.h: terminfo's capability macros would rename its words. */
#include <term.h>

static SCREEN *term_screen;

/* 1: TERM names a terminfo entry, 0: it does not, -1: no terminfo at all. */
static int term_loads(const char *name)
{
	int err = 0;

	if (setupterm((char *)name, STDOUT_FILENO, &err) != OK)
		return err == 0 ? 0 : -1;
	/* A full-screen program needs to place the cursor; "dumb" and
	 * hardcopy terminals cannot. */
	const char *cup = tigetstr("cup");
	bool usable = cup && cup != (char *)-1 && !tigetflag("hc");
	del_curterm(cur_term);
	return usable ? 1 : 2;
}

int term_choose(char *note, size_t len)
{
	static const char *const fallbacks[] = {"xterm-256color", "xterm", "vt100"};
	const char *term = getenv("TERM");

	note[0] = '\0';
	if (!term || !term[0]) {
		fprintf(stderr,
			"retop: TERM is not set: set it (e.g. TERM=xterm-256color) or use -b "
			"for text snapshots\n");
		return -1;
	}
	int r = term_loads(term);
	if (r == 1)
		return 0;
	if (r == 2) {
		fprintf(stderr,
			"retop: terminal '%s' cannot place the cursor: the dashboard needs a "
			"full-screen terminal; use -b for text snapshots\n",
			term);
		return -1;
	}
	for (size_t i = 0; i < sizeof(fallbacks) / sizeof(fallbacks[0]); i++) {
		if (term_loads(fallbacks[i]) != 1)
			continue;
		snprintf(note, len, "TERM '%s' is unknown here: using '%s'", term, fallbacks[i]);
		setenv("TERM", fallbacks[i], 1);
		return 0;
	}
	fprintf(stderr,
		"retop: terminal '%s' is not in this host's terminfo, nor any fallback "
		"(xterm-256color, xterm, vt100): install ncurses-term or use -b\n",
		term);
	return -1;
}

int term_begin(void)
{
	term_screen = newterm(NULL, stdout, stdin);
	if (!term_screen)
		return -1;
	set_term(term_screen);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25); /* Esc is "back": do not wait a second for it */
	curs_set(0);
	draw_init();
	return 0;
}

void term_end(void)
{
	if (!term_screen)
		return;
	endwin();
	delscreen(term_screen);
	term_screen = NULL;
}
