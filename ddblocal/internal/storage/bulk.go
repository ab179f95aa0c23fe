package storage

import (
	"bytes"
	"context"
)

// Chunk bounds the batches a bulk operation commits, so a large copy
// never holds the whole range in memory.
const Chunk = 4 << 20

// checkEvery is how many entries a bulk walk visits between looks at its
// context.
const checkEvery = 256

// Keys lists the keys of [lo, hi) on the live engine whose entries keep
// accepts (all when keep is nil). The caller then works key by key under
// item locks. It stops with the context's error when ctx is done.
func (d *DB) Keys(ctx context.Context, lo, hi []byte, keep func(key, value []byte) (bool, error)) ([][]byte, error) {
	iter, err := d.NewIter(lo, hi)
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	var keys [][]byte
	n := 0
	for iter.First(); iter.Valid(); iter.Next() {
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if keep != nil {
			ok, err := keep(iter.Key(), iter.Value())
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		keys = append(keys, bytes.Clone(iter.Key()))
	}
	if err := iter.Error(); err != nil {
		return nil, err
	}
	return keys, nil
}

// Fill walks [lo, hi) of src and lets stage add the writes each entry
// implies to a batch, which it commits unsynced whenever it passes Chunk
// and at the end, calling flushed after each commit. It is the range copy
// of backups and restores: its writes are made durable by the synced
// write that publishes the result (a backup's descriptor, a restored
// table's catalog entry), and what a crash leaves of them is discarded at
// the next Open. It stops with the context's error when ctx is done.
func (d *DB) Fill(ctx context.Context, src Reader, lo, hi []byte, stage func(b *Batch, key, value []byte) error, flushed func()) error {
	iter, err := src.NewIter(lo, hi)
	if err != nil {
		return err
	}
	defer iter.Close()
	batch := d.NewBatch()
	defer func() { batch.Close() }()
	flush := func() error {
		if err := batch.CommitNoSync(); err != nil {
			return err
		}
		if flushed != nil {
			flushed()
		}
		batch.Close()
		batch = d.NewBatch()
		return nil
	}
	n := 0
	for iter.First(); iter.Valid(); iter.Next() {
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := stage(batch, iter.Key(), iter.Value()); err != nil {
			return err
		}
		if batch.Len() >= Chunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := iter.Error(); err != nil {
		return err
	}
	return flush()
}
