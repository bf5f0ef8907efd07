"""Diagnostic: streaming vs. entering each frame at the true previous position, and median
error by track age, on the first validation clips (CPU). Run from training/: python3 diag_drift.py"""
import sys, torch, numpy as np, time
sys.path.insert(0,'.')
from edgetap import synth, evalsets, metrics
from edgetap.model import EdgeTap, EdgeTapConfig
from edgetap.losses import noisy_init
from edgetap.engine import track_clip
torch.set_num_threads(2)
ck = torch.load('checkpoints/edgetap-v1.pt', map_location='cpu')
m = EdgeTap(EdgeTapConfig.from_dict(ck['config'])); m.load_state_dict(ck['model']); m.eval()
vb = synth.load_train_banks('.data','cpu','val')
spec = dict(evalsets.VAL, clips=4)
seqs = evalsets.generated_sequences(vb, spec, 'cpu')
t0=time.time()
for seq in seqs:
    video = seq['video'][None].float(); tq = torch.from_numpy(seq['tq'])[None]; tr = torch.from_numpy(seq['gt_xy']).float()[None]
    vis = torch.from_numpy(seq['gt_vis'])[None]
    pq = torch.gather(tr, 2, tq[:,:,None,None].expand(-1,-1,1,2))[:,:,0]
    xy, pv, pc = track_clip(m, video, tq, pq)
    with torch.no_grad():
        gt_init = noisy_init(tr, tq, 256) * 0 + torch.cat([tr[:,:,:1], tr[:,:,:-1]],2)
        gt_init = torch.where(torch.arange(tr.shape[2])[None,None,:,None] <= tq[:,:,None,None]+1, pq[:,:,None].expand_as(tr), gt_init)
        ps,vl,cl = m.forward_parallel(video, tq, pq, gt_init)
    T = tr.shape[2]
    after = torch.arange(T)[None,None] > tq[:,:,None]
    def dav(p):
        d = (p-tr).norm(dim=-1)
        return np.mean([((d<th)&vis&after).sum().item()/ (vis&after).sum().item() for th in (1,2,4,8,16)])
    e_s = (xy-tr).norm(dim=-1); e_g=(ps[-1]-tr).norm(dim=-1)
    # error vs frames since query, visible only
    since = torch.arange(T)[None,None]-tq[:,:,None]
    prof = [ (e_s[(since==k)&vis]).median().item() for k in (1,2,4,8,16,24) if ((since==k)&vis).any()]
    print(seq['name'], 'stream davg %.3f  gt-prev-init davg %.3f'%(dav(xy), dav(ps[-1])), 'median err by age', np.round(prof,2), 'vis frac %.2f'%vis[after].float().mean())
print('time', time.time()-t0)
