build/asan/obj/cg_load.o: csrc/cg_load.c csrc/cg_profile.h \
 csrc/cg_common.h csrc/cg_names.h csrc/cg_lex.h csrc/cg_model.h \
 csrc/cg_source.h
csrc/cg_profile.h:
csrc/cg_common.h:
csrc/cg_names.h:
csrc/cg_lex.h:
csrc/cg_model.h:
csrc/cg_source.h:
