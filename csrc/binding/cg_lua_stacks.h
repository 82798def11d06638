/* cg_lua_stacks.c: the stack record (FILE.stacks) written, read, and
 * turned into folded text; the folded text of collected stacks; a loaded profile's digest (its identity). */
#ifndef CG_LUA_STACKS_H
#define CG_LUA_STACKS_H

#include "cg_binding.h"

CG_HIDDEN int cgl_write_stack_record(lua_State *L);
CG_HIDDEN int cgl_read_stack_record(lua_State *L);
CG_HIDDEN int cgl_stack_record_folded(lua_State *L);
CG_HIDDEN int cgl_profile_digest(lua_State *L);
CG_HIDDEN int cgl_stack_tree(lua_State *L);
/* core.prof_write_folded */
CG_HIDDEN int cgl_prof_write_folded(lua_State *L);

#endif
