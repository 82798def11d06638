build/asan/obj/cg_model.o: csrc/cg_model.c csrc/cg_model.h \
 csrc/cg_profile.h csrc/cg_common.h csrc/cg_names.h csrc/cg_source.h
csrc/cg_model.h:
csrc/cg_profile.h:
csrc/cg_common.h:
csrc/cg_names.h:
csrc/cg_source.h:
