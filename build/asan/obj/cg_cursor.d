build/asan/obj/cg_cursor.o: csrc/cg_cursor.c csrc/cg_profile.h \
 csrc/cg_common.h csrc/cg_names.h csrc/cg_lex.h
csrc/cg_profile.h:
csrc/cg_common.h:
csrc/cg_names.h:
csrc/cg_lex.h:
