import socket, sys, random, time
port=int(sys.argv[1]); sha=sys.argv[2]; N=int(sys.argv[3]); total=int(sys.argv[4]); batch_script=sys.argv[5]=='batch'
def resp(args):
    out=[b'*%d\r\n'%len(args)]
    for a in args:
        a=a if isinstance(a,bytes) else str(a).encode()
        out.append(b'$%d\r\n%s\r\n'%(len(a),a))
    return b''.join(out)
s=socket.create_connection(('127.0.0.1',port))
def stat():
    return None
data='0123456789abcdef0123456789abcdef'
cmds=[]
random.seed(1)
for c in range(total//N):
    topics=[random.randrange(2000) for _ in range(N)]
    if batch_script:
        keys=[]; args=[]
        for t in topics:
            keys+= [f'i:{t}',f's:{t}',f'e:{t}',f'c:{t}']
            args+= ['events',data,'','0',f'ch:{t}']
        cmds.append(resp(['EVALSHA',sha,len(keys)]+keys+['256','3600000','gw:','gwid','pause','PUBLISH']+args))
    else:
        for t in topics:
            cmds.append(resp(['EVALSHA',sha,4,f'i:{t}',f's:{t}',f'e:{t}',f'c:{t}','events',data,'','0',f'ch:{t}','256','3600000','gw:','gwid','pause','PUBLISH']))
# send in chunks of 64 commands, read replies
buf=b''
sent=0; replies=0
chunk=64
i=0
s.setblocking(True)
import select
pending=0
while i < len(cmds) or pending:
    if i < len(cmds) and pending < 256:
        s.sendall(b''.join(cmds[i:i+chunk])); pending+=len(cmds[i:i+chunk]); i+=chunk
    d=s.recv(1<<20)
    # count top-level replies approx: each reply starts with '*' at line start for arrays, '-' for errors
    buf+=d
    # parse
    while True:
        # parse one reply
        def parse(b,pos):
            nl=b.find(b'\r\n',pos)
            if nl<0: return None
            t=b[pos:pos+1]; line=b[pos+1:nl]
            if t in (b'+',b'-',b':'): return (nl+2, t==b'-')
            if t==b'$':
                n=int(line); 
                if n<0: return (nl+2,False)
                if len(b)<nl+2+n+2: return None
                return (nl+2+n+2,False)
            if t==b'*':
                n=int(line); p=nl+2; err=False
                for _ in range(n):
                    r=parse(b,p)
                    if r is None: return None
                    p=r[0]
                return (p,False)
        r=parse(buf,0)
        if r is None: break
        if r[1]: print('ERR', buf[:200]); sys.exit(1)
        buf=buf[r[0]:]; pending-=1
print('done')
