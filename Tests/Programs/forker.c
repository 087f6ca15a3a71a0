/* forker: forks 3 children that work in `child_work` and exit with 10, 11, 12; then a
 * child that execs /bin/true; then works in `parent_work`. Prints `children ok` (or bad)
 * when every status was as expected.
 * Build: gcc -O2 -o forker forker.c */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <time.h>
static double cpu(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
volatile unsigned long s;
__attribute__((noinline)) void child_work(void){double e=cpu()+0.3;while(cpu()<e)for(int i=0;i<10000;i++)s+=i*s;}
__attribute__((noinline)) void parent_work(void){double e=cpu()+0.3;while(cpu()<e)for(int i=0;i<10000;i++)s+=i*s;}
int main(void){ int ok=1;
 for(int i=0;i<3;i++){ pid_t p=fork(); if(p==0){ child_work(); exit(10+i);} int st; waitpid(p,&st,0); if(!WIFEXITED(st)||WEXITSTATUS(st)!=10+i) ok=0; }
 pid_t p=fork(); if(p==0){ execl("/bin/true","true",(char*)0); _exit(99);} int st; waitpid(p,&st,0); if(!WIFEXITED(st)||WEXITSTATUS(st)!=0) ok=0;
 parent_work(); printf("children %s\n", ok?"ok":"bad"); return ok?0:1; }
