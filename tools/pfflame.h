/* pfflame.h - internal: the text embedded in pfflame's SVG output. */
#ifndef PFFLAME_H
#define PFFLAME_H

extern const char pfflame_css[];
extern const char pfflame_js[];

#endif
