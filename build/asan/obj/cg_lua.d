build/asan/obj/cg_lua.o: csrc/cg_lua.c csrc/cg_profile.h csrc/cg_common.h \
 csrc/cg_names.h /usr/include/lua5.4/lauxlib.h \
 /usr/include/lua5.4/luaconf.h /usr/include/lua5.4/lua.h \
 /usr/include/lua5.4/lua.h
csrc/cg_profile.h:
csrc/cg_common.h:
csrc/cg_names.h:
/usr/include/lua5.4/lauxlib.h:
/usr/include/lua5.4/luaconf.h:
/usr/include/lua5.4/lua.h:
/usr/include/lua5.4/lua.h:
