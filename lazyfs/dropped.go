package lazyfs

// Dropped is what a Drop discarded, for the run's history.
type Dropped struct {
	// Files are the files that lost un-synced changes, by path.
	Files []DroppedFile `json:"files"`
}

// DroppedFile is what one file lost. After the drop it reads as it was
// when last fsynced (or as it was when the layer was mounted).
type DroppedFile struct {
	// Path is the file's path relative to the mount point, empty if no name
	// for it was found in the backing directory.
	Path string `json:"path"`
	// Inode is the backing file's inode number.
	Inode uint64 `json:"inode"`
	// Ranges are the bytes written and never synced, in offset order,
	// without the parts a later truncate cut off.
	Ranges []ByteRange `json:"ranges,omitempty"`
	// DurableSize is the file's size after the drop.
	DurableSize int64 `json:"durable_size"`
	// SizeBefore is the size the file had before the drop.
	SizeBefore int64 `json:"size_before"`
	// TruncatedTo, if set, is the shortest a truncate had made the file
	// below DurableSize: the durable bytes from there on, hidden since,
	// are back.
	TruncatedTo *int64 `json:"truncated_to,omitempty"`
}

// ByteRange is Length bytes from Offset.
type ByteRange struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}
