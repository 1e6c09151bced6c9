// Swift task-allocator use per task, for bench/memprof/profile.sh: interposes
// swift_task_alloc / swift_task_dealloc (the calls from the gateway's own code;
// the concurrency runtime's internal calls are not seen) and keeps, per task, the
// live stack of (size, caller) and its peak. Touching /tmp/memprof/tdump writes
// tasks.txt: for every task whose peak passed 1,000 bytes, the peak stack (P) and
// the live one now (N), each caller as library+offset (addr2line -f -e <binary>).
// The caller allocates its callee's async frame, so "816 by f" is f's callee's frame.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#define NT 65536
#define DEPTH 48
typedef struct { void *task; int n; long cur, peak; size_t sz[DEPTH]; void *ra[DEPTH]; void *ptr[DEPTH]; int pn; size_t psz[DEPTH]; void *pra[DEPTH]; } T;
static T tab[NT];
static void *(*real_alloc)(size_t); static void (*real_dealloc)(void*); static void *(*getcur)(void);
static T *find(void *task){ size_t h=((uintptr_t)task>>4)%NT; for(int i=0;i<NT;i++){ T *t=&tab[(h+i)%NT]; if(t->task==task) return t; if(!t->task){ t->task=task; return t;} } return 0; }
void *swift_task_alloc(size_t s){ if(!real_alloc){ real_alloc=dlsym(RTLD_NEXT,"swift_task_alloc"); real_dealloc=dlsym(RTLD_NEXT,"swift_task_dealloc"); getcur=dlsym(RTLD_NEXT,"swift_task_getCurrent"); }
  void *p=real_alloc(s); T *t=find(getcur()); if(t&&t->n<DEPTH){ t->sz[t->n]=s; t->ra[t->n]=__builtin_return_address(0); t->ptr[t->n]=p; t->n++; t->cur+=s+16;
    if(t->cur>t->peak){ t->peak=t->cur; t->pn=t->n; memcpy(t->psz,t->sz,sizeof(size_t)*t->n); memcpy(t->pra,t->ra,sizeof(void*)*t->n);} } return p; }
void swift_task_dealloc(void *p){ if(!real_dealloc){ real_dealloc=dlsym(RTLD_NEXT,"swift_task_dealloc"); getcur=dlsym(RTLD_NEXT,"swift_task_getCurrent"); }
  T *t=find(getcur()); if(t&&t->n>0&&t->ptr[t->n-1]==p){ t->n--; t->cur-=t->sz[t->n]+16; } real_dealloc(p); }
static void *watch(void *x){ for(;;){ usleep(200000); if(access("/tmp/memprof/tdump",F_OK)==0){ unlink("/tmp/memprof/tdump"); FILE *f=fopen("/tmp/memprof/tasks.txt","w");
  Dl_info di; for(int i=0;i<NT;i++){ T *t=&tab[i]; if(!t->task||t->peak<1000) continue; fprintf(f,"task peak %ld now %ld n %d\n",t->peak,t->cur,t->n);
   for(int k=0;k<t->pn;k++){ dladdr(t->pra[k],&di); fprintf(f,"  P %zu %s+0x%lx\n",t->psz[k],di.dli_fname?strrchr(di.dli_fname,'/')+1:"?",(long)((char*)t->pra[k]-(char*)di.dli_fbase)); }
   for(int k=0;k<t->n;k++){ dladdr(t->ra[k],&di); fprintf(f,"  N %zu %s+0x%lx\n",t->sz[k],di.dli_fname?strrchr(di.dli_fname,'/')+1:"?",(long)((char*)t->ra[k]-(char*)di.dli_fbase)); } }
  fclose(f);} } return 0; }
__attribute__((constructor)) static void init(void){ pthread_t th; pthread_create(&th,0,watch,0); }
