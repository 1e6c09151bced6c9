// Live heap allocations by usable size (malloc, calloc, realloc, posix_memalign,
// aligned_alloc), for bench/memprof/profile.sh. LD_PRELOAD it into the gateway;
// touching /tmp/memprof/dump0 writes before.txt and starts recording backtraces of
// the sizes listed in TRACE_SIZES (comma-separated usable sizes, e.g. 1016,328);
// touching /tmp/memprof/dump1 writes after.txt and bt.txt. A profiling aid, not
// production code: counters are global atomics, backtraces are sampled.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <errno.h>
#include <fcntl.h>
extern void *__libc_malloc(size_t); extern void __libc_free(void*); extern void *__libc_calloc(size_t,size_t);
extern void *__libc_realloc(void*,size_t); extern void *__libc_memalign(size_t,size_t);
#define NB 4096
static _Atomic long live[NB+1]; static _Atomic long total_live_bytes;
static int trace_sizes[16]; static int ntrace; static _Atomic int tracing;
static __thread int inhook;
#define MAXBT 20000
typedef struct { int size; int depth; void *bt[16]; } rec;
static rec recs[MAXBT]; static _Atomic int nrecs;
static int bucket(size_t s){ size_t b=s/8; return b>NB?NB:(int)b; }
static void note(void *p, int sign){ if(!p) return; size_t s=malloc_usable_size(p); atomic_fetch_add(&live[bucket(s)], sign); atomic_fetch_add(&total_live_bytes, sign*(long)s);
  if(sign>0 && atomic_load(&tracing) && !inhook){ for(int i=0;i<ntrace;i++) if(trace_sizes[i]==(int)s){ int k=atomic_fetch_add(&nrecs,1); if(k<MAXBT){ inhook=1; recs[k].size=s; recs[k].depth=backtrace(recs[k].bt,16); inhook=0;} break; } } }
void *malloc(size_t n){ void *p=__libc_malloc(n); note(p,1); return p; }
void free(void *p){ if(p) note(p,-1); __libc_free(p); }
void *calloc(size_t a,size_t b){ void *p=__libc_calloc(a,b); note(p,1); return p; }
void *realloc(void *q,size_t n){ if(q) note(q,-1); void *p=__libc_realloc(q,n); if(p) note(p,1); else if(q&&n) note(q,1); return p; }
int posix_memalign(void **r,size_t a,size_t n){ void *p=__libc_memalign(a,n); if(!p) return ENOMEM; note(p,1); *r=p; return 0; }
void *aligned_alloc(size_t a,size_t n){ void *p=__libc_memalign(a,n); note(p,1); return p; }
void *memalign(size_t a,size_t n){ void *p=__libc_memalign(a,n); note(p,1); return p; }
static void dump(const char *path){ FILE *f=fopen(path,"w"); if(!f) return; fprintf(f,"total_live_bytes %ld\n",(long)total_live_bytes);
  for(int i=0;i<=NB;i++) if(live[i]) fprintf(f,"size %d live %ld\n",i*8,(long)live[i]); fclose(f); }
static void dumpbt(const char *path){ int fd=open(path,O_WRONLY|O_CREAT|O_TRUNC,0644); int n=nrecs<MAXBT?nrecs:MAXBT; char buf[64];
  for(int i=0;i<n;i++){ int l=snprintf(buf,64,"=== size %d\n",recs[i].size); write(fd,buf,l); backtrace_symbols_fd(recs[i].bt,recs[i].depth,fd);} close(fd);}
#include <fcntl.h>
static void *watch(void *x){ inhook=1; int step=0; for(;;){ usleep(200000);
  if(access("/tmp/memprof/dump0",F_OK)==0){ unlink("/tmp/memprof/dump0"); dump("/tmp/memprof/before.txt"); atomic_store(&tracing,1);} 
  if(access("/tmp/memprof/dump1",F_OK)==0){ unlink("/tmp/memprof/dump1"); atomic_store(&tracing,0); dump("/tmp/memprof/after.txt"); dumpbt("/tmp/memprof/bt.txt");} } return 0; }
__attribute__((constructor)) static void init(void){ char *t=getenv("TRACE_SIZES"); if(t){ char *s=strdup(t); for(char *p=strtok(s,",");p&&ntrace<16;p=strtok(0,",")) trace_sizes[ntrace++]=atoi(p);} pthread_t th; pthread_create(&th,0,watch,0); }
