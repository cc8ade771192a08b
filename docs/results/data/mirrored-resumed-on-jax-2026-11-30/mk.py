import sys; sys.path[:0]=["/work/main/tests","/work/main/tests/pretraining"]
from helpers import packed_with_vocabulary
print(packed_with_vocabulary("/tmp/mir/data", n=32))
