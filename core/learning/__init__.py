"""What runs teach: reflection after a run, the lessons pool, the retry that follows."""
